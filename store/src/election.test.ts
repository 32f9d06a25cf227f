import { beforeAll, describe, expect, it } from 'vitest';
import type { Leadership } from './election.js';
import { Store } from './store.js';
import { startTcpProxy } from './tcp-proxy.js';
import { waitFor } from './wait.js';
import { useTestStore } from './testing/use-test-store.js';

const env = useTestStore(2);
let a: Store;
let b: Store;
beforeAll(async () => {
  [a, b] = env.stores as [Store, Store];
});

/** Tracks a campaign's promise so a test can poll whether it has been elected. */
function track(p: Promise<Leadership>): {
  leadership: () => Leadership | undefined;
  done: Promise<Leadership>;
} {
  let won: Leadership | undefined;
  const done = p.then((l) => (won = l));
  done.catch(() => undefined);
  return { leadership: () => won, done };
}

describe('Store.campaign', () => {
  it('elects one candidate; the next leads once the first resigns', async () => {
    const first = await a.campaign('/t/el1', 'a', 5);
    const second = track(b.campaign('/t/el1', 'b', 5));
    // Give the second candidate time to register and wait; it must not be elected meanwhile.
    await waitFor(async () => (await a.count('/t/el1/')) === 2);
    expect(second.leadership()).toBeUndefined();
    let firstLost = false;
    first.onLost(() => (firstLost = true));
    await first.resign();
    const next = await waitFor(() => second.leadership(), { timeoutMs: 5_000 });
    expect(firstLost).toBe(false);
    expect(await a.listKeys('/t/el1/')).toHaveLength(1);
    await next.resign();
    expect(await a.count('/t/el1/')).toBe(0);
  });

  it('fails over when the leader is cut off: the old leader learns first, then the other is elected', async () => {
    const proxy = await startTcpProxy(env.etcd.endpoint);
    const cut = await Store.connect({ endpoints: [proxy.endpoint] });
    try {
      const leader = await cut.campaign('/t/el2', 'cut', 2);
      let lostAt = 0;
      leader.onLost(() => (lostAt = Date.now()));
      const other = track(b.campaign('/t/el2', 'b', 2));
      await waitFor(async () => (await b.count('/t/el2/')) === 2);
      proxy.block();
      const next = await waitFor(() => other.leadership(), { timeoutMs: 15_000, intervalMs: 10 });
      const electedAt = Date.now();
      expect(lostAt).toBeGreaterThan(0);
      expect(lostAt).toBeLessThanOrEqual(electedAt);
      await next.resign();
    } finally {
      await cut.close();
      await proxy.close();
    }
  });

  it('reports a deleted campaign key as lost leadership', async () => {
    const leader = await a.campaign('/t/el3', 'a', 5);
    let lost = false;
    leader.onLost(() => (lost = true));
    await b.deletePrefix('/t/el3/');
    await waitFor(() => lost);
  });

  it('a campaign pending when its store closes rejects and withdraws', async () => {
    const holder = await a.campaign('/t/el5', 'a', 5);
    const c = await Store.connect({ endpoints: [env.etcd.endpoint] });
    const pending = c.campaign('/t/el5', 'c', 5);
    await waitFor(async () => (await a.count('/t/el5/')) === 2);
    // Attach the expectation first: the rejection may come while close() is still running.
    const rejected = expect(pending).rejects.toMatchObject({ code: 'unavailable' });
    await c.close();
    await rejected;
    expect(await a.count('/t/el5/')).toBe(1);
    await holder.resign();
  });

  it('an aborted campaign rejects and withdraws its candidacy', async () => {
    const holder = await a.campaign('/t/el4', 'a', 5);
    const ac = new AbortController();
    const pending = b.campaign('/t/el4', 'b', 5, { signal: ac.signal });
    await waitFor(async () => (await a.count('/t/el4/')) === 2);
    ac.abort();
    await expect(pending).rejects.toThrow();
    await waitFor(async () => (await a.count('/t/el4/')) === 1);
    await holder.resign();
  });
});
