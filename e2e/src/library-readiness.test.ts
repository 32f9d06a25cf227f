import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import type { ChildProcess } from 'node:child_process';
import { keys } from '@vtl/api';
import { Appliance } from './harness/appliance.js';
import { etcdctl, etcdctlProcess } from './harness/etcdctl.js';

/** The nodeagent's status lease (nodeagent/src/main.ts): its records lapse this long after it stops. */
const LEASE_SEC = 10;

const ready = (row: any) => row?.conditions?.find((c: any) => c.type === 'Ready');

/**
 * The library reconciler with every real process: a library turns not ready within one lease
 * period of its node going silent, and ready again when the node reports; the API's `state`
 * stays `active` meanwhile (the library is applied; its liveness is unknown, not "apply it").
 */
describe('library readiness follows its node', () => {
  let app: Appliance;
  let libId: number;
  /** The nodeagent the test froze, so afterAll thaws it whatever happened. */
  let frozen: number | undefined;
  /** The library's lifecycle view. */
  const row = async () => (await app.api.get(`/api/libraries/${libId}/status`)).body;

  beforeAll(async () => {
    app = await Appliance.start();
    const pool = (await app.api.get('/api/pools')).body[0];
    const res = await app.api.post('/api/libraries', {
      name: 'ready-lib',
      product: '3573-TL',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 10,
      num_map: 2,
      label_prefix: 'RDY',
      pool_id: pool.id,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    libId = res.body.library;
  });
  /** The test's keepalive of the frozen nodeagent's lease, killed by afterAll whatever happened. */
  let keepAlive: ChildProcess | undefined;
  afterAll(async () => {
    keepAlive?.kill();
    if (frozen) process.kill(frozen, 'SIGCONT');
    await app?.destroy();
  });

  it('shows a declared library not ready, pending its apply, then Ready once applied', async () => {
    expect((await app.api.get('/api/libraries/999/status')).status).toBe(404);
    await waitFor(async () => ready(await row())?.reason === 'PendingRestart', { timeoutMs: 15_000 });
    expect(await row()).toMatchObject({ state: 'pending_restart' });
    const apply = await app.api.post('/api/libraries/apply', { confirm: 'apply' });
    expect(apply.status, JSON.stringify(apply.body)).toBe(200);
    const r = await row();
    expect(r.state).toBe('active');
    expect(r.phase).toBe('active');
    expect(r.observedGeneration).toEqual(expect.any(Number));
    // The rows of GET /api/libraries and the libraries of GET /api/status carry the same lifecycle.
    const lifecycle = { phase: r.phase, observedGeneration: r.observedGeneration, conditions: r.conditions };
    expect((await app.api.get('/api/libraries')).body[0]).toMatchObject({
      id: libId,
      state: 'active',
      ...lifecycle,
    });
    expect((await app.api.get('/api/status')).body.libraries[0]).toMatchObject(lifecycle);
    expect(ready(r)).toMatchObject({ status: 'True', reason: 'Active' });
    expect(r.conditions.map((c: any) => [c.type, c.status])).toEqual([
      ['Ready', 'True'],
      ['Serving', 'True'],
      ['Degraded', 'False'],
    ]);
  }, 180_000);

  it('turns not ready within one lease period of the nodeagent going silent, and ready when it is back', async () => {
    const nodeagent = await app.childPid('nodeagent/dist/main.js');
    expect(nodeagent).toBeDefined();
    const stoppedAt = Date.now();
    process.kill(nodeagent!, 'SIGSTOP');
    frozen = nodeagent;
    await waitFor(async () => ready(await row())?.status === 'False', { timeoutMs: 30_000, intervalMs: 100 });
    const tookMs = Date.now() - stoppedAt;
    // The lease lapses at most one TTL after the last keepalive; the reconciler then answers at once.
    expect(tookMs).toBeLessThanOrEqual(LEASE_SEC * 1000 + 2_000);
    const down = await row();
    expect(down.state).toBe('active');
    expect(down.phase).toBe('degraded');
    expect(ready(down)).toMatchObject({ status: 'False', reason: 'NodeNotReporting' });
    expect(down.conditions.find((c: any) => c.type === 'Degraded')).toMatchObject({ status: 'True' });

    process.kill(nodeagent!, 'SIGCONT');
    frozen = undefined;
    // The nodeagent takes a new lease and publishes again without exiting (issue 13).
    await waitFor(async () => ready(await row())?.status === 'True', { timeoutMs: 60_000, intervalMs: 200 });
    expect(await row()).toMatchObject({ state: 'active' });
    expect((await app.api.get('/api/status')).body.libraries[0].library.live).toBe(true);
  }, 120_000);

  it('turns not ready within one lease period when the nodeagent hangs though its lease is kept alive, and ready when it runs again', async () => {
    // The node's heartbeat record: its name and the lease the nodeagent's status records share.
    const beat = await etcdctl(
      app.etcdEndpoint,
      ['get', keys.nodeHeartbeat.prefix, '--prefix', '-w', 'json'],
      {
        tls: app.storeTls,
      },
    );
    expect(beat.code, beat.out).toBe(0);
    const leaseId = BigInt(/"lease":(\d+)/.exec(beat.out)![1]!).toString(16);
    const kv = JSON.parse(beat.out).kvs[0];
    const nodeName = Buffer.from(kv.key, 'base64').toString().slice(keys.nodeHeartbeat.prefix.length);
    expect(nodeName).not.toBe('');
    const nodeagent = await app.childPid('nodeagent/dist/main.js');
    expect(nodeagent).toBeDefined();

    // The nodeagent hangs, but its lease stays alive (here the test keeps it, as a keepalive
    // thread of a hung process would): its status records stay and only their age tells.
    process.kill(nodeagent!, 'SIGSTOP');
    frozen = nodeagent;
    const stoppedAt = Date.now();
    keepAlive = etcdctlProcess(app.etcdEndpoint, ['lease', 'keep-alive', leaseId], app.storeTls);
    await waitFor(async () => ready(await row())?.status === 'False', { timeoutMs: 30_000, intervalMs: 100 });
    expect(Date.now() - stoppedAt).toBeLessThanOrEqual(LEASE_SEC * 1000 + 2_000);
    const down = await row();
    expect(down).toMatchObject({ state: 'active', phase: 'degraded' });
    expect(ready(down)).toMatchObject({ status: 'False', reason: 'NodeNotReporting' });
    expect(ready(down).message).toMatch(
      new RegExp(
        `^Node ${nodeName} has not refreshed its status since \\S+ \\(more than \\d+ s\\) though its lease is still held`,
      ),
    );
    // The lease held: the node's record is still in the store; only its heartbeat's age told.
    const record = await etcdctl(app.etcdEndpoint, ['get', keys.nodeStatus.one(nodeName), '--keys-only'], {
      tls: app.storeTls,
    });
    expect(record.out.trim()).toBe(keys.nodeStatus.one(nodeName));
    // The list views say the same.
    expect(ready((await app.api.get('/api/libraries')).body[0])).toMatchObject({ status: 'False' });

    keepAlive.kill();
    keepAlive = undefined;
    process.kill(nodeagent!, 'SIGCONT');
    frozen = undefined;
    await waitFor(async () => ready(await row())?.status === 'True', { timeoutMs: 60_000, intervalMs: 200 });
    expect(await row()).toMatchObject({ state: 'active', phase: 'active' });
  }, 120_000);

  it('answers mint and load 503 with Retry-After, never "apply it first", while the emulator restarts', async () => {
    await waitFor(async () => ready(await row())?.status === 'True', { timeoutMs: 60_000, intervalMs: 200 });
    const calls = () =>
      Promise.all([
        app.api.post('/api/cartridges', { library: libId, count: 1 }),
        app.api.post(`/api/libraries/${libId}/drives/0/load`, { label: 'RDY999L8' }),
      ]);
    // The restart is quick (seconds): kill again if the window passed between two looks.
    let refused: Awaited<ReturnType<typeof calls>> | undefined;
    for (let kill = 0; kill < 3 && !refused; kill++) {
      const pid = await app.emulatorPid();
      expect(pid).toBeDefined();
      process.kill(pid!, 'SIGKILL');
      refused = await waitFor(
        async () => {
          const serving = (await row()).conditions?.find((c: any) => c.type === 'Serving');
          if (serving?.status !== 'False') return undefined;
          const answers = await calls();
          return answers.every((a) => a.status === 503) ? answers : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 50 },
      ).catch(() => undefined);
      await waitFor(async () => ready(await row())?.status === 'True', {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
    }
    expect(refused, 'no refusal seen while the emulator restarted').toBeDefined();
    for (const res of refused!) {
      expect(res.body.error.code, res.text).toBe('unavailable');
      expect(res.body.error.message).toMatch(
        /applied but its data plane is not serving it.*no apply is needed/,
      );
      expect(res.body.error.message).not.toMatch(/apply it first/);
      expect(res.body.error.details).toMatchObject({ library: libId });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Back: the same calls are answered on their merits again (a mint is made).
    expect((await app.api.post('/api/cartridges', { library: libId, count: 1 })).status).toBe(200);
  }, 240_000);
});
