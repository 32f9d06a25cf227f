import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CartridgeSpec, ROOT, keys } from '@vtl/api';
import { Store } from '@vtl/store';
import { asBytes, cartridgesBytes, cartridgesJson, legacyLibraryBytes, statusBytes } from './status-body.js';
import { StatusFixture } from '../test/status-fixture.js';
import { ViewCache } from './view-cache.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

/**
 * The view cache against a real etcd: reads within the revision window share one revision read,
 * yet a read after this process's write sees it, and serialized bodies are kept exactly as long
 * as the records do not change.
 */
describe('ViewCache', () => {
  const t = useTestStore(2);
  let writer: Store;
  let other: Store;
  let views: ViewCache;
  beforeAll(async () => {
    [writer, other] = t.stores as [Store, Store];
    views = await ViewCache.start(writer);
  });
  afterAll(async () => {
    await views?.close();
  });

  let slot = 0;
  /** A node's status record as its nodeagent writes it. */
  const nodeRecord = (name: string, updatedAt: string, detail: string) => ({
    node: name,
    updated_at: updatedAt,
    dataplane: {
      state: 'running',
      generation: 1,
      pid: 1,
      detail,
      started_at: '',
      iscsi_portal: '',
      iscsi_sessions: 0,
    },
  });
  const cartridge = (label: string): CartridgeSpec => ({
    label,
    library: 1,
    home_slot: ++slot,
    created_at: new Date().toISOString(),
    deleting: false,
    last_export_gen: '',
  });

  it('a read right after a write sees the write, however recent the last revision read', async () => {
    for (let n = 1; n <= 20; n++) {
      const label = `RYW${String(n).padStart(3, '0')}L8`;
      await views.fresh(); // a revision read just before the write: inside the window
      await writer.put(keys.cartridges.one(label), cartridge(label));
      const labels = JSON.parse(cartridgesJson(await views.fresh())).map((c: { label: string }) => c.label);
      expect(labels).toContain(label);
    }
  });

  it('sees a write answered to another process once the window has passed', async () => {
    await views.fresh();
    await other.put(keys.cartridges.one('OTH001L8'), cartridge('OTH001L8'));
    await new Promise((r) => setTimeout(r, 60));
    const labels = JSON.parse(cartridgesJson(await views.fresh())).map((c: { label: string }) => c.label);
    expect(labels).toContain('OTH001L8');
  });

  it("a strict read sees another process's write at once", async () => {
    await views.fresh();
    await other.put(keys.cartridges.one('OTH002L8'), cartridge('OTH002L8'));
    const labels = JSON.parse(cartridgesJson(await views.fresh(performance.now(), true))).map(
      (c: { label: string }) => c.label,
    );
    expect(labels).toContain('OTH002L8');
  });

  it('keeps the serialized bytes until the records change, then serializes anew', async () => {
    const bytes = () => asBytes(views, 'test-cartridges', () => cartridgesJson(views));
    await views.fresh();
    const first = bytes();
    expect(bytes()).toBe(first); // the same Buffer: not serialized or encoded again
    const rev = await writer.put(keys.cartridges.one('NEW001L8'), cartridge('NEW001L8'));
    await views.fresh();
    expect(BigInt(views.revision)).toBeGreaterThanOrEqual(BigInt(rev));
    const second = bytes();
    expect(second).not.toBe(first);
    expect(second.toString()).toContain('NEW001L8');
    expect(first.toString()).not.toContain('NEW001L8');
    // A write outside the cached records moves the revision on, not the body.
    const unrelated = await writer.put(`${ROOT}bench-unrelated`, { n: 1 });
    await views.fresh();
    expect(BigInt(views.revision)).toBeGreaterThanOrEqual(BigInt(unrelated));
    expect(bytes()).toBe(second);
  });
  it("keeps the cartridge list's bytes through changes of records the list does not show", async () => {
    let computed = 0;
    const changes = () => views.memo('test-carts-changes', () => ++computed);
    await writer.put(
      keys.nodeStatus.one('n-carts'),
      nodeRecord('n-carts', '2026-01-01T00:00:00Z', 'serving 1 library'),
    );
    await views.fresh();
    const first = cartridgesBytes(views);
    const before = changes();
    await writer.put(
      keys.nodeStatus.one('n-carts'),
      nodeRecord('n-carts', '2026-01-01T00:00:00Z', 'serving 2 libraries'),
    );
    await views.fresh();
    expect(changes()).toBe(before + 1); // the records changed...
    expect(cartridgesBytes(views)).toBe(first); // ...the list's bytes did not
    await writer.put(keys.cartridges.one('NEW002L8'), cartridge('NEW002L8'));
    await views.fresh();
    const second = cartridgesBytes(views);
    expect(second).not.toBe(first);
    expect(second.toString()).toContain('NEW002L8');
    expect(second.equals(Buffer.from(cartridgesJson(views)))).toBe(true);
    await writer.delete(keys.nodeStatus.one('n-carts'));
  });

  it('keeps the views when a node record is rewritten with only a new updated_at, not when it changes', async () => {
    let computed = 0;
    const read = async () => (await views.fresh()).memo('test-node-memo', () => ++computed);
    await writer.put(
      keys.nodeStatus.one('n-memo'),
      nodeRecord('n-memo', '2026-01-01T00:00:00Z', 'serving 1 library'),
    );
    const first = await read();
    await writer.put(
      keys.nodeStatus.one('n-memo'),
      nodeRecord('n-memo', '2026-01-01T00:00:01Z', 'serving 1 library'),
    );
    expect(await read()).toBe(first);
    await writer.put(
      keys.nodeStatus.one('n-memo'),
      nodeRecord('n-memo', '2026-01-01T00:00:02Z', 'serving 2 libraries'),
    );
    expect(await read()).toBe(first + 1);
    await writer.delete(keys.nodeStatus.one('n-memo'));
    expect(await read()).toBe(first + 2);
  });

  it("keeps the status view's large parts through a pool's figures, not through its library", async () => {
    // A library and its pool as the apiserver writes them, and the pool's figures as its nodeagent does.
    const fixture = new StatusFixture(1, 3);
    const lib = { ...fixture.s.libraries[0]!, id: 7, home_pool: 7 };
    await writer.put(keys.pools.one(7), { ...fixture.s.pools[0]!, id: 7 });
    await writer.put(keys.libraries.one(7), lib);
    await writer.put(keys.poolStatus.one(7), { ...fixture.poolStatus(7, 1), id: 7 });
    await views.fresh();
    const first = statusBytes(views);
    const legacy = legacyLibraryBytes(views);
    await writer.put(keys.poolStatus.one(7), { ...fixture.poolStatus(7, 2), id: 7 });
    await views.fresh();
    const second = statusBytes(views);
    expect(second[1]).toBe(first[1]); // the libraries
    expect(second[3]).toBe(first[3]); // the cartridge list
    expect(second[2]!.toString()).toContain('"fs_used_bytes":2');
    expect(legacyLibraryBytes(views)).toBe(legacy);
    await writer.put(keys.libraries.one(7), { ...lib, serial: 'CHANGED7' });
    await views.fresh();
    const third = statusBytes(views);
    expect(third[1]).not.toBe(first[1]);
    expect(third[1]!.toString()).toContain('CHANGED7');
    expect(legacyLibraryBytes(views).toString()).toContain('CHANGED7');
    await writer.delete(keys.libraries.one(7));
    await writer.delete(keys.poolStatus.one(7));
    await writer.delete(keys.pools.one(7));
  });
});
