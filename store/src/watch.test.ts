import { describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import { z } from 'zod';
import type { Versioned } from './codec.js';
import { Store } from './store.js';
import { startTcpProxy } from './tcp-proxy.js';
import { waitFor } from './wait.js';
import type { WatchEvent } from './watch.js';
import { useTestStore } from './testing/use-test-store.js';

const Item = z.object({ n: z.number() });

const env = useTestStore();

describe('Store.watch', () => {
  it('replays history from a revision, then follows live changes, only under the prefix', async () => {
    const from = await env.store.put('/t/w1/a', { n: 1 });
    await env.store.put('/t/w1/b', { n: 2 });
    await env.store.put('/t/w1x', { n: 0 });
    await env.store.delete('/t/w1/a');
    const events: WatchEvent[] = [];
    const watch = await env.store.watch('/t/w1/', { fromRevision: from }, (e) => events.push(e));
    await env.store.put('/t/w1/c', { n: 3 });
    await waitFor(() => events.length === 4);
    await watch.close();
    expect(events.map((e) => [e.type, e.key])).toEqual([
      ['put', '/t/w1/a'],
      ['put', '/t/w1/b'],
      ['delete', '/t/w1/a'],
      ['put', '/t/w1/c'],
    ]);
    expect(events[0]).toMatchObject({ value: { n: 1 }, modRevision: from });
  });

  it('without fromRevision delivers only what happens after it started', async () => {
    await env.store.put('/t/w2/old', { n: 1 });
    const events: WatchEvent[] = [];
    const watch = await env.store.watch('/t/w2/', {}, (e) => events.push(e));
    await env.store.put('/t/w2/new', { n: 2 });
    await waitFor(() => events.length === 1);
    await watch.close();
    await env.store.put('/t/w2/after-close', { n: 3 });
    expect(events.map((e) => e.key)).toEqual(['/t/w2/new']);
  });

  it('resumes after a broken connection without missing or repeating an event', async () => {
    const proxy = await startTcpProxy(env.etcd.endpoint);
    const watcherStore = await Store.connect({ endpoints: [proxy.endpoint] });
    try {
      const seen: string[] = [];
      await watcherStore.watch('/t/w3/', {}, (e) => seen.push(e.key));
      await env.store.put('/t/w3/0', { n: 0 });
      await waitFor(() => seen.length === 1);
      proxy.block();
      for (let i = 1; i <= 5; i++) await env.store.put(`/t/w3/${i}`, { n: i });
      proxy.unblock();
      await env.store.put('/t/w3/6', { n: 6 });
      await waitFor(() => seen.length >= 7, { timeoutMs: 20_000 });
      expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `/t/w3/${i}`));
    } finally {
      await watcherStore.close();
      await proxy.close();
    }
  });

  it('rejects a watch from a compacted revision with a conflict error', async () => {
    const old = await env.store.put('/t/w4/a', { n: 1 });
    const rev = await env.store.put('/t/w4/a', { n: 2 });
    await compact(rev);
    await expect(env.store.watch('/t/w4/', { fromRevision: old }, () => undefined)).rejects.toMatchObject({
      code: 'conflict',
    });
  });
});

describe('Store.informer', () => {
  it('lists then watches with no gap and no duplicate while writers race its start', async () => {
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await env.store.put(`/t/inf1/${String(written).padStart(4, '0')}`, { n: written });
        written++;
      }
    })();
    await waitFor(() => written >= 20);
    const seen = new Map<string, number>();
    const count = (item: Versioned<{ n: number }>) => seen.set(item.key, (seen.get(item.key) ?? 0) + 1);
    const informer = await env.store.informer('/t/inf1/', Item, {
      onSync: (items) => items.forEach(count),
      onPut: count,
      onDelete: () => undefined,
    });
    const atStart = written;
    try {
      await waitFor(() => written >= atStart + 20);
    } finally {
      writing = false;
      await writer;
    }
    await waitFor(() => seen.size === written, { message: `saw ${seen.size} of ${written}` });
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(informer.items().size).toBe(written);
    await informer.close();
  });

  it('keeps its cache in step, skips records failing the schema, and reports deletes with the last value', async () => {
    await env.store.put('/t/inf2/a', { n: 1 });
    await env.store.put('/t/inf2/bad', { n: 'x' });
    const log: string[] = [];
    const informer = await env.store.informer('/t/inf2/', Item, {
      onPut: (i) => log.push(`put ${i.key} ${i.value.n}`),
      onDelete: (k, last) => log.push(`delete ${k} ${last?.value.n}`),
    });
    expect(log).toEqual(['put /t/inf2/a 1']);
    await env.store.put('/t/inf2/a', { n: 2 });
    await env.store.put('/t/inf2/b', { n: 'still bad' });
    await env.store.delete('/t/inf2/a');
    await env.store.put('/t/inf2/c', { n: 3 });
    await waitFor(() => log.length === 4);
    expect(log).toEqual(['put /t/inf2/a 1', 'put /t/inf2/a 2', 'delete /t/inf2/a 2', 'put /t/inf2/c 3']);
    expect([...informer.items().keys()]).toEqual(['/t/inf2/c']);
    await informer.close();
  });

  it('re-lists after its history was compacted away and emits exactly what changed', async () => {
    await env.store.put('/t/inf3/keep', { n: 1 });
    await env.store.put('/t/inf3/change', { n: 1 });
    await env.store.put('/t/inf3/remove', { n: 1 });
    const proxy = await startTcpProxy(env.etcd.endpoint);
    const cut = await Store.connect({ endpoints: [proxy.endpoint] });
    try {
      const log: string[] = [];
      const informer = await cut.informer('/t/inf3/', Item, {
        onSync: () => undefined,
        onPut: (i) => log.push(`put ${i.key} ${i.value.n}`),
        onDelete: (k) => log.push(`delete ${k}`),
      });
      proxy.block();
      await env.store.put('/t/inf3/change', { n: 2 });
      await env.store.delete('/t/inf3/remove');
      await env.store.put('/t/inf3/added', { n: 5 });
      await env.store.put('/t/inf3/transient', { n: 6 });
      await compact(
        await env.store.delete('/t/inf3/transient').then(() => env.store.put('/t/unrelated', { n: 0 })),
      );
      proxy.unblock();
      await waitFor(() => log.length >= 3, { timeoutMs: 20_000 });
      expect(log.sort()).toEqual(['delete /t/inf3/remove', 'put /t/inf3/added 5', 'put /t/inf3/change 2']);
      expect([...informer.items().keys()].sort()).toEqual([
        '/t/inf3/added',
        '/t/inf3/change',
        '/t/inf3/keep',
      ]);
      // And it keeps watching afterwards.
      await env.store.put('/t/inf3/later', { n: 7 });
      await waitFor(() => log.includes('put /t/inf3/later 7'));
      await informer.close();
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
