import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { Cdb } from '@vtl/emulator';
import { LibIscsiSession } from '@vtl/emulator/testing/libiscsi';
import { Appliance } from './harness/appliance.js';
import { census, processesOf } from './harness/processes.js';
import {
  CONTROL_PLANE,
  alive,
  exitTimes,
  isZombie,
  runToExit,
  timeToExit,
  waitUntilOnly,
} from './harness/supervision.js';

const root = path.resolve(import.meta.dirname, '../..');
const HOST_IQN = 'iqn.2026-11.test.host:supervision';

describe('supervision: the appliance cleans up after itself', () => {
  let app: Appliance;
  let library: number;
  let session: LibIscsiSession | undefined;

  beforeAll(async () => {
    app = await Appliance.start();
  });
  afterAll(async () => {
    // Whatever a failed assertion left behind: nothing of this state dir may outlive the test.
    const left = await processesOf(app.stateDir);
    for (const pid of left.etcd) process.kill(pid, 'SIGCONT');
    await app?.destroy();
    for (const pid of Object.values(await processesOf(app.stateDir)).flat()) process.kill(pid, 'SIGKILL');
  });

  it('runs one of each process, and a second start against the same state dir fails at once', async () => {
    expect(census(await processesOf(app.stateDir))).toEqual({
      appliance: 1,
      etcd: 1,
      apiserver: 1,
      controller: 1,
      nodeagent: 1,
      emulator: 1,
    });

    const { code, output, ms } = await runToExit(
      [process.execPath, path.join(root, 'appliance/dist/main.js')],
      {
        cwd: root,
        env: app.launchEnv(),
      },
    );
    expect(ms).toBeLessThan(10_000);
    expect(code).toBe(2);
    expect(output).toContain(
      `The state directory ${app.stateDir} is in use by the appliance running as pid ${app.pid}`,
    );
    expect(output).toContain('or give this start another VTL_STATE_DIR');
    // The first one is untouched.
    expect(census(await processesOf(app.stateDir))).toMatchObject({
      appliance: 1,
      apiserver: 1,
      nodeagent: 1,
    });
    expect((await app.api.get('/api/system')).status).toBe(200);
  });

  it('kill -9 of the main process: its children exit by themselves, the emulator stays to be adopted', async () => {
    const pool = (await app.api.get('/api/pools')).body[0];
    const declared = await app.api.post('/api/libraries', {
      name: 'survivor',
      product: '03584L32',
      drive_product: 'ULT3580-TD9',
      num_drives: 1,
      num_slots: 0,
      num_map: 0,
      label_prefix: 'SRV',
      pool_id: pool.id,
    });
    expect(declared.status).toBe(201);
    library = declared.body.library;
    await app.apply();
    expect((await app.api.post('/api/cartridges', { library, count: 1 })).status).toBe(200);
    // A backup host's session to the emulator, which is adopted rather than stopped.
    const portal = `127.0.0.1:${app.ports.iscsi}`;
    const [target] = await LibIscsiSession.discover(portal, HOST_IQN);
    session = await LibIscsiSession.connect(portal, target!.targetName, HOST_IQN);
    await waitFor(async () => (await session!.command(0, Cdb.tur())).status === 0, { timeoutMs: 10_000 });
    const before = await processesOf(app.stateDir);

    await app.signalMain('SIGKILL');
    // Within a few seconds, by themselves: nobody signals them.
    const t0 = Date.now();
    const gone = await waitUntilOnly(app.stateDir, {
      keep: ['appliance', 'emulator'],
      timeoutMs: 10_000,
      what: 'children still run 10 s after kill -9',
    });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(gone.emulator).toEqual(before.emulator);
  });

  it('the next start (through scripts/start.sh) ends with exactly one of each, adopting the emulator, nothing lost', async () => {
    const emulatorBefore = (await processesOf(app.stateDir)).emulator;
    app.command = ['bash', 'scripts/start.sh'];
    await app.boot();
    const now = await processesOf(app.stateDir);
    expect(census(now)).toEqual({
      appliance: 1,
      etcd: 1,
      apiserver: 1,
      controller: 1,
      nodeagent: 1,
      emulator: 1,
    });
    // start.sh ends in `exec node ...`: the process it started is the appliance itself.
    expect(now.appliance).toEqual([app.pid]);
    expect(now.emulator).toEqual(emulatorBefore);

    const libraries = (await app.api.get('/api/libraries')).body;
    expect(libraries.map((l: { name: string }) => l.name)).toContain('survivor');
    const cartridges = (await app.api.get('/api/cartridges')).body;
    expect(cartridges.map((c: { label: string }) => c.label)).toContain('SRV001L9');
    const status = (await app.api.get('/api/status')).body;
    expect(status.libraries.find((l: any) => l.library.id === library)?.library.live).toBe(true);
    // The host's session opened before the crash still works.
    const inquiry = await session!.command(0, Cdb.inquiry(96), { dataInLength: 96 });
    expect(inquiry.status).toBe(0);
    expect(inquiry.data.subarray(16, 32).toString()).toContain('03584L32');
    // Now, while the target still runs: a logout from a stopped one waits on libiscsi's reconnects.
    await session!.close();
    session = undefined;
  });

  it('a start finds the leftovers whose pid files are gone (in /proc) and stops them', async () => {
    const before = await processesOf(app.stateDir);
    // Frozen, they cannot notice their launcher's death and exit by themselves: real leftovers,
    // holding their ports and etcd's data dir, which only the next start can clear.
    const frozen = [...CONTROL_PLANE.flatMap((r) => before[r]), ...before.etcd];
    expect(frozen).toHaveLength(4);
    for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    await app.signalMain('SIGKILL');
    const run = path.join(app.stateDir, 'run');
    for (const f of (await fs.readdir(run)).filter((n) => n.endsWith('.pid'))) await fs.rm(path.join(run, f));

    // The launcher itself (start.sh's build was tested above): leftovers take up to 10 s to stop.
    app.command = [process.execPath, path.join(root, 'appliance/dist/main.js')];
    await app.boot();
    const now = await processesOf(app.stateDir);
    expect(census(now)).toEqual({
      appliance: 1,
      etcd: 1,
      apiserver: 1,
      controller: 1,
      nodeagent: 1,
      emulator: 1,
    });
    for (const pid of frozen) expect(alive(pid) && !(await isZombie(pid)), `pid ${pid}`).toBe(false);
    expect(now.emulator).toEqual(before.emulator);
    const libraries = (await app.api.get('/api/libraries')).body;
    expect(libraries.map((l: { name: string }) => l.name)).toContain('survivor');
  }, 120_000);

  it('with etcd stopped (SIGSTOP), each process exits within 10 s of SIGTERM, the appliance last, leaving nothing', async () => {
    const running = await processesOf(app.stateDir);
    const etcd = running.etcd[0]!;
    process.kill(etcd, 'SIGSTOP');
    try {
      // The processes that were fully up when the store stalled, all at once.
      const times = await exitTimes(running, CONTROL_PLANE, 'SIGTERM', 12_000);
      for (const role of CONTROL_PLANE)
        expect(times[role], `${role} exit after SIGTERM (ms)`).toBeLessThan(10_000);
      // The launcher restarts them (they now wait for etcd): it must still stop in time, and stop all.
      await waitFor(async () => (await processesOf(app.stateDir)).apiserver.length === 1, {
        timeoutMs: 10_000,
      });
      const ms = await timeToExit(app.pid!, 'SIGTERM', 12_000).catch(() => Infinity);
      expect(ms, 'appliance exit after SIGTERM (ms)').toBeLessThan(10_000);
      await waitUntilOnly(app.stateDir, { timeoutMs: 5_000 });
    } finally {
      if (alive(etcd)) process.kill(etcd, 'SIGCONT');
    }
  });

  it('SIGTERM to `npm start` (what a service manager sends) stops everything, and the state dir starts again', async () => {
    // npm forwards SIGTERM to its child, which `exec bash scripts/start.sh` + `exec node` make the
    // appliance itself; without the execs it reached only a shell and the appliance kept running.
    app.command = ['npm', 'start'];
    await app.boot();
    const now = await processesOf(app.stateDir);
    expect(census(now)).toMatchObject({ appliance: 1, nodeagent: 1, emulator: 1 });
    expect((await app.api.get('/api/cartridges')).body.map((c: { label: string }) => c.label)).toContain(
      'SRV001L9',
    );
    const ms = await timeToExit(app.pid!, 'SIGTERM', 12_000);
    expect(ms).toBeLessThan(10_000);
    await waitUntilOnly(app.stateDir, { timeoutMs: 5_000 });
  });

  it('an emulator that stops answering does not outlive the appliance: SIGTERM stops everything within 10 s', async () => {
    app.command = [process.execPath, path.join(root, 'appliance/dist/main.js')];
    await app.boot();
    const running = await processesOf(app.stateDir);
    expect(running.emulator).toHaveLength(1);
    // Frozen, it answers nothing on its control socket (as one stuck while stopping did).
    process.kill(running.emulator[0]!, 'SIGSTOP');
    const ms = await timeToExit(app.pid!, 'SIGTERM', 12_000).catch(() => Infinity);
    expect(ms, 'appliance exit after SIGTERM (ms)').toBeLessThan(10_000);
    await waitUntilOnly(app.stateDir, { timeoutMs: 5_000, what: 'the frozen emulator killed' });
  });

  it('with etcd gone (killed), each process and then the appliance exit within 10 s of SIGTERM', async () => {
    app.command = [process.execPath, path.join(root, 'appliance/dist/main.js')];
    await app.boot();
    const running = await processesOf(app.stateDir);
    process.kill(running.etcd[0]!, 'SIGKILL');
    // The processes that were fully up when the store went, all at once.
    const times = await exitTimes(running, CONTROL_PLANE, 'SIGTERM', 12_000);
    for (const role of CONTROL_PLANE)
      expect(times[role], `${role} exit after SIGTERM (ms)`).toBeLessThan(10_000);
    // The launcher keeps restarting them (they cannot reach etcd); it must still stop in time.
    const ms = await timeToExit(app.pid!, 'SIGTERM', 12_000).catch(() => Infinity);
    expect(ms, 'appliance exit after SIGTERM (ms)').toBeLessThan(10_000);
    await waitUntilOnly(app.stateDir, { timeoutMs: 5_000 });
  });
});
