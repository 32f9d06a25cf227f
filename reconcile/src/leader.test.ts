import { Store } from '@vtl/store';
import { startTcpProxy } from '@vtl/store/testing';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { runWhileLeader } from './leader.js';
import { waitFor } from './wait.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const logger = pino({ level: 'silent' });

const env = useTestStore(2);
let a: Store;
let b: Store;
beforeAll(async () => {
  [a, b] = env.stores as [Store, Store];
});

/** A lead() that records who leads and stays until aborted. */
function leader(name: string, leading: Set<string>, history: string[]) {
  return async (signal: AbortSignal) => {
    leading.add(name);
    history.push(`${name} start`);
    // Two leaders at once would be the bug this machinery exists to prevent.
    if (leading.size > 1) history.push('OVERLAP');
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    leading.delete(name);
    history.push(`${name} end`);
  };
}

describe('runWhileLeader', () => {
  it('runs lead in one candidate only; stop() hands over to the other', async () => {
    const leading = new Set<string>();
    const history: string[] = [];
    const opts = { election: '/t/lead1', ttlSec: 5, logger };
    const ra = runWhileLeader({ ...opts, store: a, candidateId: 'a', lead: leader('a', leading, history) });
    await waitFor(() => leading.has('a'));
    const rb = runWhileLeader({ ...opts, store: b, candidateId: 'b', lead: leader('b', leading, history) });
    await waitFor(async () => (await a.count('/t/lead1/')) === 2);
    expect([...leading]).toEqual(['a']);
    await ra.stop();
    await waitFor(() => leading.has('b'));
    await rb.stop();
    expect(history).toEqual(['a start', 'a end', 'b start', 'b end']);
    expect(await a.count('/t/lead1/')).toBe(0);
  });

  it('aborts lead when leadership is lost, and campaigns again afterwards', async () => {
    const proxy = await startTcpProxy(env.etcd.endpoint);
    const cut = await Store.connect({ endpoints: [proxy.endpoint] });
    const leading = new Set<string>();
    const history: string[] = [];
    const opts = { election: '/t/lead2', ttlSec: 2, logger };
    const rc = runWhileLeader({
      ...opts,
      store: cut,
      candidateId: 'cut',
      lead: leader('cut', leading, history),
    });
    try {
      await waitFor(() => leading.has('cut'));
      const rb = runWhileLeader({ ...opts, store: b, candidateId: 'b', lead: leader('b', leading, history) });
      await waitFor(async () => (await b.count('/t/lead2/')) === 2);
      proxy.block();
      await waitFor(() => leading.has('b'), { timeoutMs: 15_000 });
      expect(history.slice(0, 3)).toEqual(['cut start', 'cut end', 'b start']);
      // Reconnected, the old leader is a candidate again and takes over when b steps down.
      proxy.unblock();
      await waitFor(async () => (await b.count('/t/lead2/')) === 2, { timeoutMs: 20_000 });
      await rb.stop();
      await waitFor(() => leading.has('cut'), { timeoutMs: 10_000 });
      expect(history).not.toContain('OVERLAP');
    } finally {
      await rc.stop();
      await cut.close();
      await proxy.close();
    }
  });

  it('steps down and campaigns again when lead fails', async () => {
    let runs = 0;
    const r = runWhileLeader({
      store: a,
      election: '/t/lead3',
      candidateId: 'a',
      ttlSec: 5,
      logger,
      lead: async (signal) => {
        runs++;
        if (runs === 1) throw new Error('lead crashed');
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
      },
    });
    await waitFor(() => runs === 2);
    expect(await a.count('/t/lead3/')).toBe(1);
    await r.stop();
    expect(await a.count('/t/lead3/')).toBe(0);
  });
});
