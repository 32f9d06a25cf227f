import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '@vtl/store/testing';
import { waitFor } from '@vtl/reconcile';
import { loadConfig } from './config.js';
import { emulatorConfig } from './dataplane/emulator-config.js';
import { EmulatorSupervisor } from './dataplane/emulator-supervisor.js';
import { probeEmulator } from './emulator-runner.js';

const runnerEntry = path.resolve(import.meta.dirname, '../dist/emulator-runner.js');

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * The chart's emulator container: the built runner (`vtl emulator`) beside a supervisor in
 * VTL_EMULATOR_UNIT=container mode, both on one state directory, as the two containers of the
 * nodeagent pod share it (and their process namespace).
 */
describe('the emulator in a container of its own', () => {
  let stateDir: string | undefined;
  let runner: ChildProcess | undefined;
  afterEach(async () => {
    if (runner && runner.exitCode === null) {
      runner.kill('SIGKILL');
      await new Promise((r) => runner!.once('exit', r));
    }
    if (stateDir) await fs.rm(stateDir, { recursive: true, force: true });
  });

  it('starts on the configuration the nodeagent writes, outlives the nodeagent, restarts after a crash and stops with the container', async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-runner-'));
    runner = spawn(process.execPath, [runnerEntry], {
      env: { ...process.env, VTL_STATE_DIR: stateDir, VTL_EMULATOR_RETRY_MS: '300' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const config = loadConfig({
      VTL_STATE_DIR: stateDir,
      VTL_NODE: 'node1',
      VTL_ISCSI_PORT: String(await freePort()),
      VTL_EMULATOR_UNIT: 'container',
    });
    const supervisor = () =>
      new EmulatorSupervisor({
        stateDir: stateDir!,
        entry: config.emulatorEntry,
        unit: config.emulatorUnit,
        logger: pino({ level: 'silent' }),
        onEvent: () => undefined,
        onChange: () => undefined,
      });
    const want = (generation: number) =>
      emulatorConfig(config, { generation, libraries: [], requested_at: new Date().toISOString() }, [], []);

    expect(await probeEmulator(stateDir), 'nothing configured yet: alive').toBe(true);
    const first = supervisor();
    await first.ensure(want(1));
    expect(await probeEmulator(stateDir)).toBe(true);
    expect(first.status).toMatchObject({ state: 'running', generation: 1 });
    const pid1 = first.status.pid;

    // A new data-plane generation: the old emulator is stopped over its socket, the runner
    // starts the new configuration.
    await first.ensure(want(2));
    expect(first.status).toMatchObject({ state: 'running', generation: 2 });
    const pid2 = first.status.pid;
    expect(pid2).not.toBe(pid1);
    expect(alive(pid1)).toBe(false);

    // The nodeagent restarts: the next one adopts the same emulator.
    first.detach();
    const second = supervisor();
    await second.ensure(want(2));
    expect(second.status).toMatchObject({ state: 'running', generation: 2, pid: pid2 });
    second.detach();

    // A crash: the runner starts the same configuration again on its own.
    process.kill(pid2, 'SIGKILL');
    const third = supervisor();
    await waitFor(
      async () => {
        await third.ensure(want(2)).catch(() => undefined);
        return third.status.state === 'running' && third.status.pid !== pid2;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const pid3 = third.status.pid;
    third.detach();

    // The container stops: the runner stops the emulator and exits 0.
    const exited = new Promise<number | null>((r) => runner!.once('exit', (code) => r(code)));
    runner.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(alive(pid3)).toBe(false);
    expect(await probeEmulator(stateDir, 500), 'configured but not answering: not alive').toBe(false);
  });
});
