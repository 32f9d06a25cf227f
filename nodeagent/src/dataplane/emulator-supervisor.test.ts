import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/store';
import { freePort } from '@vtl/store/testing';
import { loadConfig } from '../config.js';
import { emulatorConfig } from './emulator-config.js';
import { EmulatorSupervisor } from './emulator-supervisor.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The real emulator (emulator/dist), spawned detached as the nodeagent does it. */
describe('the emulator supervisor', () => {
  let stateDir: string | undefined;
  const pids: number[] = [];
  afterEach(async () => {
    for (const pid of pids.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    if (stateDir) await fs.rm(stateDir, { recursive: true, force: true });
  });

  const setup = async (entry?: string) => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-supervisor-'));
    const config = loadConfig({
      VTL_STATE_DIR: stateDir,
      VTL_NODE: 'node1',
      VTL_ISCSI_PORT: String(await freePort()),
    });
    const changes: string[] = [];
    const supervisor = () =>
      new EmulatorSupervisor({
        stateDir: stateDir!,
        entry: entry ?? config.emulatorEntry,
        logger: pino({ level: 'silent' }),
        onEvent: () => undefined,
        onChange: () => void changes.push(''),
      });
    const want = (generation: number) =>
      emulatorConfig(config, { generation, libraries: [], requested_at: new Date().toISOString() }, [], []);
    return { supervisor, want, changes };
  };

  it('starts the emulator, keeps it for the same generation and restarts it for a new one', async () => {
    const { supervisor, want, changes } = await setup();
    const sup = supervisor();
    await sup.ensure(want(1));
    expect(sup.status).toMatchObject({ state: 'running', generation: 1, detail: 'serving 0 libraries' });
    expect(sup.status.iscsi_portal).not.toBe('');
    expect(changes.length).toBeGreaterThan(0);
    const first = sup.status.pid;
    pids.push(first);
    expect(alive(first)).toBe(true);
    expect(sup.emulator).toBeDefined();

    await sup.ensure(want(1));
    expect(sup.status.pid).toBe(first);

    await sup.ensure(want(2));
    pids.push(sup.status.pid);
    expect(sup.status).toMatchObject({ state: 'running', generation: 2 });
    expect(sup.status.pid).not.toBe(first);
    expect(alive(first)).toBe(false);
    await sup.stop();
    expect(sup.status.state).toBe('stopped');
    expect(sup.emulator).toBeUndefined();
  }, 90_000);

  it('lets a restarted nodeagent adopt the running emulator of the wanted generation (host I/O goes on)', async () => {
    const { supervisor, want } = await setup();
    const before = supervisor();
    await before.ensure(want(4));
    const pid = before.status.pid;
    pids.push(pid);
    before.detach();
    expect(alive(pid)).toBe(true);

    const after = supervisor();
    await after.ensure(want(4));
    expect(after.status).toMatchObject({ state: 'running', generation: 4, pid });
    await after.stop();
    expect(alive(pid)).toBe(false);
  }, 90_000);

  it('notices a dead emulator and starts a new one on the next pass', async () => {
    const { supervisor, want } = await setup();
    const sup = supervisor();
    await sup.ensure(want(1));
    const pid = sup.status.pid;
    pids.push(pid);
    process.kill(pid, 'SIGKILL');
    await waitFor(() => sup.status.state === 'stopped', { timeoutMs: 10_000 });
    expect(sup.status.detail).toBe('control socket closed');
    expect(sup.emulator).toBeUndefined();

    await sup.ensure(want(1));
    pids.push(sup.status.pid);
    expect(sup.status).toMatchObject({ state: 'running', generation: 1 });
    expect(sup.status.pid).not.toBe(pid);
    await sup.stop();
  }, 90_000);

  it('reports an emulator that dies while starting as failed at once, with how it ended', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-broken-emulator-'));
    const broken = path.join(dir, 'main.js');
    await fs.writeFile(broken, "console.error('cannot load'); process.exit(3);\n");
    try {
      const { supervisor, want } = await setup(broken);
      const sup = supervisor();
      const started = Date.now();
      await sup.ensure(want(1));
      // Well before the start deadline (60 s): the process was gone, so there was nothing to wait for.
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(sup.status.state).toBe('failed');
      expect(sup.status.detail).toMatch(
        /did not start \(it exited \(code 3\) before answering\); see .*emulator\.log/,
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
