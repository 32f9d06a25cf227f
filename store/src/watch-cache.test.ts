import { describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import { z } from 'zod';
import { Store } from './store.js';
import { startTcpProxy } from './tcp-proxy.js';
import { waitFor } from './wait.js';
import type { CacheChange } from './watch-cache.js';
import { useTestStore } from './testing/use-test-store.js';

const Item = z.object({ n: z.number() });
type Item = z.infer<typeof Item>;

const env = useTestStore();

const values = (m: ReadonlyMap<string, { value: Item }>) =>
  Object.fromEntries([...m].map(([k, v]) => [k, v.value.n]));

describe('Store.watchCache', () => {
  it('lists every prefix at one revision, then follows them with one watch of the root', async () => {
    await env.store.put('/c1/a/1', { n: 1 });
    await env.store.put('/c1/b/1', { n: 10 });
    await env.store.put('/c1/other', { n: 0 });
    await env.store.put('/c1/a/bad', { wrong: true });
    const cache = await env.store.watchCache('/c1/', [
      { prefix: '/c1/a/', schema: Item },
      { prefix: '/c1/b/', schema: Item },
    ]);
    const changes: CacheChange[] = [];
    cache.onChange((c) => changes.push(c));
    expect(values(cache.items<Item>('/c1/a/'))).toEqual({ '/c1/a/1': 1 });
    expect(values(cache.items<Item>('/c1/b/'))).toEqual({ '/c1/b/1': 10 });

    await env.store.put('/c1/a/2', { n: 2 });
    await env.store.delete('/c1/b/1');
    const last = await env.store.put('/c1/other', { n: 1 });
    expect(await cache.reached(last, 10_000)).toBe(true);
    expect(values(cache.items<Item>('/c1/a/'))).toEqual({ '/c1/a/1': 1, '/c1/a/2': 2 });
    expect(values(cache.items<Item>('/c1/b/'))).toEqual({});
    // Writes outside the prefixes move the revision on but are no change of a cached record.
    expect(changes).toEqual([
      { prefix: '/c1/a/', key: '/c1/a/2' },
      { prefix: '/c1/b/', key: '/c1/b/1' },
    ]);
    expect(cache.revision).toBe(last);
    await cache.close();
  });

  it('reflects a write as soon as the writer is answered: read-your-writes by revision', async () => {
    const cache = await env.store.watchCache('/c2/', [{ prefix: '/c2/x/', schema: Item }]);
    for (let n = 1; n <= 20; n++) {
      await env.store.put('/c2/x/k', { n });
      // What a view does before it answers: wait for the newest revision this client saw.
      expect(await cache.reached(env.store.seenRevision, 10_000)).toBe(true);
      expect(cache.items<Item>('/c2/x/').get('/c2/x/k')?.value.n).toBe(n);
    }
    // A revision nobody wrote yet is not reached: the wait gives up instead of lying.
    expect(await cache.reached((BigInt(env.store.seenRevision) + 1000n).toString(), 200)).toBe(false);
    await cache.close();
  });

  it("counts what a watch delivered as seen: a result learnt from another process's write is not read back older", async () => {
    // A second client writes (the nodeagent finishing an operation); this one learns of it
    // through a watch only, as an apiserver waiting for the operation does.
    const other = await Store.connect({ endpoints: [env.etcd.endpoint] });
    try {
      const cache = await env.store.watchCache('/c4/', [{ prefix: '/c4/x/', schema: Item }]);
      const seen: string[] = [];
      const watch = await env.store.watch('/c4/done/', {}, (e) => seen.push(e.modRevision));
      const before = BigInt(env.store.seenRevision);
      await other.put('/c4/x/result', { n: 7 });
      const done = await other.put('/c4/done/op', { n: 1 });
      await waitFor(() => seen.length === 1, { timeoutMs: 10_000 });
      expect(BigInt(env.store.seenRevision)).toBeGreaterThanOrEqual(BigInt(done));
      expect(BigInt(env.store.seenRevision)).toBeGreaterThan(before);
      // So a view waiting for seenRevision shows the write made before the one watched.
      expect(await cache.reached(env.store.seenRevision, 10_000)).toBe(true);
      expect(cache.items<Item>('/c4/x/').get('/c4/x/result')?.value.n).toBe(7);
      await watch.close();
      await cache.close();
    } finally {
      await other.close();
    }
  });

  it('follows through a broken connection, and re-lists right after its history was compacted', async () => {
    await env.store.put('/c3/p/keep', { n: 1 });
    await env.store.put('/c3/p/change', { n: 1 });
    await env.store.put('/c3/p/remove', { n: 1 });
    const proxy = await startTcpProxy(env.etcd.endpoint);
    const cut = await Store.connect({ endpoints: [proxy.endpoint] });
    try {
      const cache = await cut.watchCache('/c3/', [{ prefix: '/c3/p/', schema: Item }]);
      let everything = 0;
      cache.onChange((c) => c === undefined && everything++);

      // A disconnect alone: the watch resumes from its next revision, nothing lost.
      proxy.block();
      await env.store.put('/c3/p/during', { n: 4 });
      proxy.unblock();
      const during = await env.store.put('/c3/p/after', { n: 5 });
      expect(await cache.reached(during, 20_000)).toBe(true);
      expect(values(cache.items<Item>('/c3/p/'))).toMatchObject({ '/c3/p/during': 4, '/c3/p/after': 5 });

      // History compacted while cut off: the cache re-lists and says "everything changed".
      proxy.block();
      await env.store.put('/c3/p/change', { n: 2 });
      await env.store.delete('/c3/p/remove');
      await env.store.put('/c3/p/added', { n: 5 });
      const rev = await env.store.put('/c3/unrelated', { n: 0 });
      await compact(rev);
      proxy.unblock();
      expect(await cache.reached(rev, 20_000)).toBe(true);
      await waitFor(() => everything === 1, { timeoutMs: 20_000 });
      expect(values(cache.items<Item>('/c3/p/'))).toEqual({
        '/c3/p/keep': 1,
        '/c3/p/change': 2,
        '/c3/p/added': 5,
        '/c3/p/during': 4,
        '/c3/p/after': 5,
      });
      // And it keeps watching afterwards.
      const later = await env.store.put('/c3/p/later', { n: 7 });
      expect(await cache.reached(later, 10_000)).toBe(true);
      expect(cache.items<Item>('/c3/p/').get('/c3/p/later')?.value.n).toBe(7);
      await cache.close();
    } finally {
      await cut.close();
      await proxy.close();
    }
  });
});

/** Compacts etcd's history up to rev, so older revisions can no longer be watched. */
async function compact(rev: string): Promise<void> {
  const client = new Etcd3({ hosts: env.etcd.endpoint });
  try {
    await client.kv.compact({ revision: rev, physical: true });
  } finally {
    client.close();
  }
}
