import { beforeAll, describe, expect, it } from 'vitest';
import { PoolSpec, PoolStatus, isoNow, keys } from '@vtl/api';
import type { Lease } from '@vtl/store';
import {
  claimPool,
  createPool,
  deletePool,
  publishPoolStatus,
  releasePool,
  removePoolStatus,
} from './pools.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const plan = (name: string) => (id: number) =>
  PoolSpec.parse({ id, name, node: 'n1', path: `/p/${name}`, created_at: isoNow() });
const active = (id: number): PoolStatus => ({ id, node: 'n1', state: 'active', detail: 'ready' });

describe('pool records (create, delete, status)', () => {
  const t = useTestStore();
  let lease: Lease;
  beforeAll(async () => {
    lease = await t.store.lease(60);
  });

  const status = (id: number) => t.store.get(keys.poolStatus.one(id), PoolStatus);

  it('a pool deleted while its nodeagent gathered figures gets no status', async () => {
    const pool = (await createPool(t.store, plan('walked')))!;
    // The nodeagent reads the spec, then walks the directory; the pool is deleted meanwhile.
    const read = (await t.store.get(keys.pools.one(pool.id), PoolSpec))!;
    expect(await deletePool(t.store, pool)).toBe(true);
    expect(await publishPoolStatus(t.store, read, active(pool.id), lease)).toBe(false);
    expect(await status(pool.id)).toBeUndefined();
  });

  it("a deleted pool's status is removed by its own node only", async () => {
    const pool = (await createPool(t.store, plan('gone')))!;
    const read = (await t.store.get(keys.pools.one(pool.id), PoolSpec))!;
    expect(await publishPoolStatus(t.store, read, active(pool.id), lease)).toBe(true);
    // Not while the spec exists; not by another node.
    await removePoolStatus(t.store, pool.id, 'n1');
    expect(await status(pool.id)).toBeDefined();
    expect(await deletePool(t.store, pool)).toBe(true);
    await removePoolStatus(t.store, pool.id, 'n2');
    expect(await status(pool.id)).toBeDefined();
    await removePoolStatus(t.store, pool.id, 'n1');
    expect(await status(pool.id)).toBeUndefined();
  });

  it('refused creates (a taken name) leave the id counter: the next one takes the next id', async () => {
    const first = (await createPool(t.store, plan('taken')))!;
    for (let i = 0; i < 5; i++) expect(await createPool(t.store, plan('taken'))).toBeUndefined();
    expect((await createPool(t.store, plan('next')))?.id).toBe(first.id + 1);
  });

  it('a pool a library homes is not deleted', async () => {
    const pool = (await createPool(t.store, plan('homed')))!;
    await t.store.put(keys.poolHome(pool.id), 1);
    expect(await deletePool(t.store, pool)).toBe(false);
    expect(await t.store.get(keys.pools.one(pool.id), PoolSpec)).toBeDefined();
  });

  it("a GitOps claim is released only by its source; an adopter's claim survives the old source's release", async () => {
    const pool = (await createPool(t.store, plan('declared')))!;
    const managedBy = async () => (await t.store.get(keys.pools.one(pool.id), PoolSpec))?.value.managed_by;
    const by = (source: string) => ({ source, revision: 'r1', name: 'declared', spec_hash: 'h1' });
    await claimPool(t.store, pool.id, by('team'));
    expect(await managedBy()).toEqual(by('team'));
    // The same claim again writes nothing (the record keeps its revision).
    const before = (await t.store.get(keys.pools.one(pool.id), PoolSpec))!.modRevision;
    await claimPool(t.store, pool.id, by('team'));
    expect((await t.store.get(keys.pools.one(pool.id), PoolSpec))!.modRevision).toBe(before);
    // Another source adopts it; the first source's release then leaves the adopter's claim.
    await claimPool(t.store, pool.id, by('other'));
    expect(await releasePool(t.store, pool.id, 'team')).toBe(false);
    expect(await managedBy()).toEqual(by('other'));
    expect(await releasePool(t.store, pool.id, 'other')).toBe(true);
    expect(await managedBy()).toBeUndefined();
    // A claim on a pool gone meanwhile is a conflict the next sync retries.
    expect(await deletePool(t.store, pool)).toBe(true);
    await expect(claimPool(t.store, pool.id, by('team'))).rejects.toMatchObject({ code: 'conflict' });
  });
});
