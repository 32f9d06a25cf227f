import { beforeAll, describe, expect, it } from 'vitest';
import {
  CartridgeSpec,
  Job,
  Op,
  isJobActive,
  isoNow,
  keys,
  type CatalogEntry,
  type PoolStatus,
} from '@vtl/api';
import { submitExclusiveOp } from '@vtl/domain';
import { EventJournal, type Store } from '@vtl/store';
import { putTestLibrary, putTestNodeStatus, putTestPool, putTestRemote } from '@vtl/store/testing';
import { EVICT_POLICY, evictionPass } from './evict-policy.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const GB = 1_000_000_000;
const GEN = '20260101T000000Z';

async function seed(store: Store) {
  await putTestPool(store, { path: '/p' });
  const figures = {
    name: 'p1',
    mountpoint: '/p',
    fs_total_bytes: 100 * GB,
    fs_used_bytes: 90 * GB,
    logical_bytes: 0,
    dedup_ratio: 1,
    compress_ratio: 1,
    record_bytes: 0,
    phys_est_bytes: 0,
    zpool_size_bytes: 0,
    zpool_alloc_bytes: 0,
    collected_at: isoNow(),
    vdo_logical_bytes: 0,
    vdo_physical_bytes: 0,
    vdo_saving_pct: 0,
  };
  await store.put(keys.poolStatus.one(1), {
    id: 1,
    node: 'n1',
    state: 'active',
    detail: '',
    figures,
  } as PoolStatus);
  await putTestLibrary(store, { serial: 'S1', num_slots: 9, num_ie: 1, label_prefix: 'POL' });
  // POL001: oldest, exported; POL002: exported, in a drive; POL003: not exported;
  // POL004: exported, newer; POL005: exported, newest.
  const carts = [
    ['POL001L8', GEN, 'slot:1', '2026-01-01T00:00:00Z'],
    ['POL002L8', GEN, 'drive:0', '2025-01-01T00:00:00Z'],
    ['POL003L8', '', 'slot:3', '2025-01-01T00:00:00Z'],
    ['POL004L8', GEN, 'slot:4', '2026-02-01T00:00:00Z'],
    ['POL005L8', GEN, 'slot:5', '2026-03-01T00:00:00Z'],
  ] as const;
  for (const [label, gen, ,] of carts)
    await store.put(
      keys.cartridges.one(label),
      CartridgeSpec.parse({ label, library: 1, home_slot: 1, created_at: isoNow(), last_export_gen: gen }),
    );
  await putTestNodeStatus(
    store,
    carts.map(([label, , location, modified]) => ({
      label,
      library: 1,
      size_bytes: 6 * GB,
      phys_bytes: 6 * GB,
      modified,
      location,
      local_state: 'resident',
    })),
  );
  await putTestRemote(store);
  for (const label of ['POL001L8', 'POL002L8', 'POL004L8', 'POL005L8']) {
    const e: CatalogEntry = {
      remote_id: 1,
      system_name: 'site-a',
      library_serial: 'S1',
      cart_label: label,
      generation: GEN,
      logical_bytes: 1,
      stored_bytes: 1,
      chunk_count: 1,
      exported_at: isoNow(),
      synced_at: isoNow(),
    };
    await store.put(keys.catalog.one(1, 'site-a', 'S1', label, GEN), e);
  }
}

describe('eviction policy (evict.threshold_pct)', () => {
  const t = useTestStore();
  let journal: EventJournal;
  beforeAll(async () => {
    journal = new EventJournal(t.store);
    await seed(t.store);
  });

  it('does nothing while the threshold or the default remote is unset', async () => {
    await t.store.put(keys.settings, { 'system.name': 'site-a', 'export.default_remote': '1' });
    expect(await evictionPass(t.store, journal)).toEqual([]);
    await t.store.put(keys.settings, { 'system.name': 'site-a', 'evict.threshold_pct': '80' });
    expect(await evictionPass(t.store, journal)).toEqual([]);
  });

  it('evicts exported, unloaded cartridges, oldest first, until the pool would be below it', async () => {
    await t.store.put(keys.settings, {
      'system.name': 'site-a',
      'evict.threshold_pct': '80',
      'export.default_remote': '1',
    });
    const ids = await evictionPass(t.store, journal);
    // 10 GB above 80 %: two 6 GB cartridges.
    const jobs = await Promise.all(ids.map(async (id) => (await t.store.get(keys.jobs.one(id), Job))!.value));
    expect(jobs.map((j) => j.label)).toEqual(['POL001L8', 'POL004L8']);
    expect(jobs[0]).toMatchObject({
      kind: 'evict',
      state: 'queued',
      generation: GEN,
      node: 'n1',
      requested_by: EVICT_POLICY,
    });
    // While they run, the policy waits for them instead of queuing more.
    expect(await evictionPass(t.store, journal)).toEqual([]);
  });

  /** Ends every job and operation the earlier steps left running (as their executors would). */
  async function settle() {
    for (const { value } of (await t.store.list(keys.jobs.prefix, Job)).items)
      if (isJobActive(value.state))
        await t.store.put(keys.jobs.one(value.id), { ...value, state: 'cancelled' });
    for (const { value } of (await t.store.list(keys.ops.prefix, Op)).items)
      if (value.state !== 'succeeded' && value.state !== 'failed')
        await t.store.put(keys.ops.one(value.id), { ...value, state: 'succeeded' });
  }
  const apply = () =>
    submitExclusiveOp(t.store, { kind: 'apply', executor: 'controller', params: {} }, 'An apply');
  const jobCount = async () => (await t.store.list(keys.jobs.prefix, Job)).items.length;

  it('queues nothing while an apply runs: its jobs meet the admission of API jobs', async () => {
    await settle();
    const applyId = await apply();
    const before = await jobCount();
    expect(await evictionPass(t.store, journal)).toEqual([]);
    expect(await jobCount()).toBe(before);
    const op = (await t.store.get(keys.ops.one(applyId), Op))!.value;
    await t.store.put(keys.ops.one(applyId), { ...op, state: 'succeeded' });
    expect(await evictionPass(t.store, journal)).toHaveLength(2);
  });

  it('a policy pass racing an apply: never both go ahead', async () => {
    for (let round = 0; round < 6; round++) {
      await settle();
      const [pass, op] = await Promise.allSettled([evictionPass(t.store, journal), apply()]);
      expect(pass.status).toBe('fulfilled');
      const queued = pass.status === 'fulfilled' ? pass.value : [];
      // The apply is refused (409 or 400 with jobs active) if a job went first, and vice versa.
      if (op.status === 'fulfilled') expect(queued).toEqual([]);
      else expect(queued.length).toBeGreaterThan(0);
    }
  });
});
