import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '@vtl/store/testing';
import { loadConfig } from '../config.js';
import { emulatorConfig } from './emulator-config.js';
import { EmulatorSupervisor } from './emulator-supervisor.js';

const emulatorEntry = path.resolve(import.meta.dirname, '../../../emulator/dist/main.js');

/**
 * With VTL_EMULATOR_UNIT the nodeagent does not spawn the emulator: it writes the configuration
 * and restarts the unit (deploy/systemd/vtl-emulator.service). A stand-in `systemctl` on PATH
 * does what systemd would: start the unit's command, the real emulator, on that config file.
 */
describe('the emulator in a systemd unit of its own', () => {
  let stateDir: string | undefined;
  let stop: (() => Promise<void>) | undefined;
  const savedPath = process.env.PATH;
  afterEach(async () => {
    process.env.PATH = savedPath;
    await stop?.();
    if (stateDir) await fs.rm(stateDir, { recursive: true, force: true });
  });

  it('is (re)started through systemctl with the configuration the nodeagent wrote, then stopped over its socket', async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-unit-'));
    const bin = path.join(stateDir, 'bin');
    const calls = path.join(stateDir, 'systemctl-calls');
    await fs.mkdir(bin);
    await fs.writeFile(
      path.join(bin, 'systemctl'),
      `#!/bin/sh\necho "$@" >> ${calls}\n` +
        `setsid ${process.execPath} ${emulatorEntry} --config ${stateDir}/emulator/config.json ` +
        `>> ${stateDir}/unit.log 2>&1 < /dev/null &\n`,
      { mode: 0o755 },
    );
    process.env.PATH = `${bin}:${savedPath}`;

    const config = loadConfig({
      VTL_STATE_DIR: stateDir,
      VTL_NODE: 'node1',
      VTL_ISCSI_PORT: String(await freePort()),
      VTL_EMULATOR_UNIT: 'vtl-emulator.service',
    });
    expect(config.emulatorUnit).toBe('vtl-emulator.service');
    const supervisor = new EmulatorSupervisor({
      stateDir,
      entry: config.emulatorEntry,
      unit: config.emulatorUnit,
      logger: pino({ level: 'silent' }),
      onEvent: () => undefined,
      onChange: () => undefined,
    });
    stop = () => supervisor.stop();
    const want = emulatorConfig(
      config,
      { generation: 3, libraries: [], requested_at: new Date().toISOString() },
      [],
      [],
    );
    await supervisor.ensure(want);

    expect(supervisor.status.state).toBe('running');
    expect(supervisor.status.generation).toBe(3);
    expect((await fs.readFile(calls, 'utf8')).trim()).toBe('restart --no-block vtl-emulator.service');
    const written = JSON.parse(await fs.readFile(path.join(stateDir, 'emulator', 'config.json'), 'utf8'));
    expect(written.generation).toBe(3);

    const pid = supervisor.status.pid;
    await supervisor.stop();
    stop = undefined;
    expect(supervisor.status.state).toBe('stopped');
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
