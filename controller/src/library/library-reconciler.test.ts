import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import {
  DataplaneSpec,
  LibrarySpec,
  LibraryStatus,
  PoolSpec,
  isoNow,
  keys,
  NodeRecord,
  type NodeLibraryStatus,
} from '@vtl/api';
import { Store, waitFor, type Lease } from '@vtl/store';
import { startTcpProxy, type TcpProxy } from '@vtl/store/testing';
import { HEARTBEAT_CHECK_MS, startLibraryReconciler } from './library-reconciler.js';
import { conditionOf } from './library-status.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

/** The test node's status lease; the nodeagent's is 10 s, shorter here to keep the test short. */
const LEASE_TTL_SEC = 3;

const library = (id: number, pool: number) =>
  LibrarySpec.parse({
    id,
    name: `lib-${id}`,
    vendor: 'IBM',
    product: '3573-TL',
    variant: '',
    serial: `S${id}`,
    drive_model: 'ULT3580-TD8',
    drive_serials: [],
    num_drives: 1,
    num_slots: 5,
    num_ie: 1,
    label_prefix: 'ABC',
    media_dir: `/p${pool}/lib-${id}`,
    home_pool: pool,
    created_at: isoNow(),
  });

const nodeRecord = (generation: number): NodeRecord => ({
  node: 'n1',
  updated_at: isoNow(),
  dataplane: {
    state: 'running',
    generation,
    pid: 1,
    detail: '',
    started_at: isoNow(),
    iscsi_portal: '127.0.0.1:3260',
    iscsi_sessions: 0,
  },
});

const served = (id: number): NodeLibraryStatus => ({
  node: 'n1',
  id,
  library: { id, serial: `S${id}`, changer_sg: '', drives: [], slots: [] },
  cartridges: [],
});

describe('the library reconciler', () => {
  const t = useTestStore();
  let proxy: TcpProxy;
  /** The "nodeagent": its own connection to etcd, through a relay the test can cut. */
  let node: Store;
  let lease: Lease & { onRenewed(cb: () => void): void };
  let reconciler: { stop(): Promise<void> };

  const status = async (id: number) => (await t.store.get(keys.libraryStatus.one(id), LibraryStatus))?.value;
  const ready = async (id: number) => conditionOf(await status(id), 'Ready')?.status;
  /** Publishes the node's status as the nodeagent does: node record and per-library records, leased. */
  const publish = async (generation: number, libraries: number[]) => {
    const txn = node.transaction();
    for (const id of libraries) txn.put(keys.nodeLibraryStatus.one('n1', id), served(id), { lease });
    txn.put(keys.nodeStatus.one('n1'), nodeRecord(generation), { lease });
    await txn.commit();
  };

  beforeAll(async () => {
    proxy = await startTcpProxy(t.etcd.endpoint);
    node = await Store.connect({ endpoints: [proxy.endpoint], deadlineMs: 3_000 });
    lease = await node.renewingLease(LEASE_TTL_SEC);
    await t.store.put(
      keys.pools.one(1),
      PoolSpec.parse({ id: 1, name: 'p', node: 'n1', path: '/p1', created_at: isoNow() }),
    );
    await t.store.put(keys.libraries.one(1), library(1, 1));
    await t.store.put(keys.libraries.one(2), library(2, 1));
    await t.store.put(
      keys.dataplane,
      DataplaneSpec.parse({ generation: 1, libraries: [1], requested_at: isoNow() }),
    );
    reconciler = await startLibraryReconciler({ store: t.store, logger: pino({ level: 'warn' }) });
  });
  afterAll(async () => {
    await reconciler?.stop();
    await lease?.revoke().catch(() => undefined);
    await node?.close();
    await proxy?.close();
  });

  it('writes pending_restart for a library outside the data plane and activating for one inside it', async () => {
    await waitFor(
      async () => (await status(2))?.phase === 'pending_restart' && (await status(1))?.phase === 'activating',
      {
        timeoutMs: 10_000,
      },
    );
    expect(await status(2)).toMatchObject({
      state: 'pending_restart',
      observedGeneration: expect.any(Number),
    });
    expect(conditionOf(await status(2), 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PendingRestart',
    });
    expect(await status(1)).toMatchObject({ state: 'pending_restart', phase: 'activating' });
  });

  it('turns active and Ready once the node serves the library in the desired generation', async () => {
    await publish(1, [1]);
    await waitFor(async () => (await ready(1)) === 'True', { timeoutMs: 10_000 });
    const s = await status(1);
    expect(s).toMatchObject({ state: 'active', phase: 'active', served_generation: 1 });
    expect(conditionOf(s, 'Serving')).toMatchObject({ status: 'True', reason: 'Served' });
    expect(conditionOf(s, 'Degraded')).toMatchObject({ status: 'False' });
  });

  it('turns the library not ready within one lease period of losing its node, and ready again when it is back', async () => {
    const before = conditionOf(await status(1), 'Ready')!;
    const lost = Date.now();
    proxy.block();
    await waitFor(async () => (await ready(1)) === 'False', { timeoutMs: 20_000, intervalMs: 50 });
    const tookMs = Date.now() - lost;
    // The records lapse with the lease, at most one TTL after the last keepalive; then one pass.
    expect(tookMs).toBeLessThanOrEqual(LEASE_TTL_SEC * 1000 + 1_500);
    const down = await status(1);
    // Still applied (a lapsed node is "unknown", not "apply it"): state stays active.
    expect(down).toMatchObject({ state: 'active', phase: 'degraded' });
    expect(conditionOf(down, 'Ready')).toMatchObject({ status: 'False', reason: 'NodeNotReporting' });
    expect(conditionOf(down, 'Serving')).toMatchObject({ status: 'False', reason: 'NodeNotReporting' });
    expect(conditionOf(down, 'Degraded')).toMatchObject({ status: 'True', reason: 'NodeNotReporting' });
    expect(Date.parse(conditionOf(down, 'Ready')!.lastTransitionTime)).toBeGreaterThan(
      Date.parse(before.lastTransitionTime),
    );

    // The node comes back: a new lease, its status published again (as the nodeagent does).
    const renewed = new Promise<void>((resolve) => lease.onRenewed(resolve));
    proxy.unblock();
    await renewed;
    await publish(1, [1]);
    await waitFor(async () => (await ready(1)) === 'True', { timeoutMs: 10_000 });
    expect(await status(1)).toMatchObject({ state: 'active', phase: 'active' });
  }, 60_000);

  it('turns the library degraded when its node reports without it', async () => {
    await publish(1, []);
    await node.delete(keys.nodeLibraryStatus.one('n1', 1));
    await waitFor(async () => (await status(1))?.phase === 'degraded', { timeoutMs: 10_000 });
    expect(conditionOf(await status(1), 'Ready')).toMatchObject({ status: 'False', reason: 'NotServed' });
    await publish(1, [1]);
    await waitFor(async () => (await ready(1)) === 'True', { timeoutMs: 10_000 });
  });

  it('keeps the status right under concurrent writers: a second reconciler and a stray writer', async () => {
    const second = await startLibraryReconciler({ store: t.store, logger: pino({ level: 'warn' }) });
    try {
      // A stray writer keeps putting a wrong status; each write is undone by a CAS-checked rewrite.
      const stray: LibraryStatus = { id: 1, state: 'pending_restart', phase: 'failed' };
      for (let i = 0; i < 20; i++) {
        await t.store.put(keys.libraryStatus.one(1), stray);
        await new Promise((r) => setTimeout(r, 10));
      }
      await waitFor(async () => (await status(1))?.phase === 'active', { timeoutMs: 10_000 });
      // Meanwhile the node flaps: both reconcilers race on every change, the last word is the truth.
      for (let i = 0; i < 5; i++) {
        await publish(1, []);
        await node.delete(keys.nodeLibraryStatus.one('n1', 1));
        await publish(1, [1]);
      }
      await waitFor(async () => (await status(1))?.phase === 'active', { timeoutMs: 10_000 });
      await new Promise((r) => setTimeout(r, 500));
      expect(await status(1)).toMatchObject({ state: 'active', phase: 'active' });
      expect(await ready(1)).toBe('True');
    } finally {
      await second.stop();
    }
  });

  it('turns the library not ready when its node stops beating though its lease holds, and ready at the next beat', async () => {
    await waitFor(async () => (await ready(1)) === 'True', { timeoutMs: 10_000 });
    const STALE_MS = 1_000;
    const beat = () =>
      node.put(
        keys.nodeHeartbeat.one('n1'),
        { node: 'n1', at: isoNow(), interval_ms: 250, stale_after_ms: STALE_MS },
        { lease },
      );
    // Beating: ready stays, past several stale periods.
    for (let i = 0; i < 12; i++) {
      await beat();
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(await ready(1)).toBe('True');
    // The loop hangs; the lease is still kept alive (its keepalives run apart).
    const quietFrom = Date.now();
    await waitFor(async () => (await ready(1)) === 'False', { timeoutMs: 10_000, intervalMs: 50 });
    expect(Date.now() - quietFrom).toBeLessThanOrEqual(STALE_MS + HEARTBEAT_CHECK_MS + 1_500);
    const down = await status(1);
    expect(down).toMatchObject({ state: 'active', phase: 'degraded' });
    expect(conditionOf(down, 'Ready')).toMatchObject({ reason: 'NodeNotReporting' });
    expect(conditionOf(down, 'Ready')!.message).toMatch(
      /^Node n1 has not refreshed its status since \S+ \(more than 1 s\) though its lease is still held/,
    );
    // The node record is still there: only the heartbeat said so.
    expect(await t.store.get(keys.nodeStatus.one('n1'), NodeRecord)).toBeDefined();
    await beat();
    await waitFor(async () => (await ready(1)) === 'True', { timeoutMs: 10_000 });
    // Beats stop being checked once their record is gone.
    await node.delete(keys.nodeHeartbeat.one('n1'));
    await new Promise((r) => setTimeout(r, STALE_MS + 2 * HEARTBEAT_CHECK_MS));
    expect(await ready(1)).toBe('True');
  }, 60_000);

  it('removes the status of a library whose spec is gone', async () => {
    await t.store.delete(keys.libraries.one(2));
    await waitFor(async () => (await status(2)) === undefined, { timeoutMs: 10_000 });
  });
});
