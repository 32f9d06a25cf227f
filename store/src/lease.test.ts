import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Store } from './store.js';
import { startTcpProxy } from './tcp-proxy.js';
import { waitFor } from './wait.js';
import { useTestStore } from './testing/use-test-store.js';

const Val = z.object({ v: z.number() });

const env = useTestStore();

describe('Store.lease', () => {
  it('keeps leased keys beyond the TTL while alive, and revoke() removes them without onLost', async () => {
    const lease = await env.store.lease(1);
    let lost = false;
    lease.onLost(() => (lost = true));
    await env.store.put('/t/lease/a', { v: 1 }, { lease });
    expect(await env.store.create('/t/lease/b', { v: 2 }, { lease })).toBeDefined();
    // Outlive the TTL three times over, checking all along: keepalives must hold the keys.
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      expect(await env.store.count('/t/lease/')).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await lease.revoke();
    expect(await env.store.count('/t/lease/')).toBe(0);
    expect(lost).toBe(false);
  });

  it('close() revokes outstanding leases, so leased keys vanish at once', async () => {
    const other = await Store.connect({ endpoints: [env.etcd.endpoint] });
    const lease = await other.lease(60);
    await other.put('/t/lease-close/x', { v: 1 }, { lease });
    expect(await env.store.get('/t/lease-close/x', Val)).toBeDefined();
    await other.close();
    expect(await env.store.get('/t/lease-close/x', Val)).toBeUndefined();
  });

  it('cut off from etcd: onLost fires before etcd expires the lease and drops its keys', async () => {
    const proxy = await startTcpProxy(env.etcd.endpoint);
    const cut = await Store.connect({ endpoints: [proxy.endpoint] });
    try {
      const lease = await cut.lease(2);
      let lostAt = 0;
      lease.onLost(() => (lostAt = Date.now()));
      await cut.put('/t/lease-cut/x', { v: 1 }, { lease });
      proxy.block();
      const goneAt = await waitFor(async () => !(await env.store.get('/t/lease-cut/x', Val)) && Date.now(), {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      expect(lostAt).toBeGreaterThan(0);
      expect(lostAt).toBeLessThanOrEqual(goneAt);
      // A write under the expired lease is refused once etcd can be reached again.
      proxy.unblock();
      await waitFor(() => cut.get('/t/lease-cut/x', Val).then(() => true), { timeoutMs: 15_000 });
      await expect(cut.put('/t/lease-cut/y', { v: 2 }, { lease })).rejects.toThrow(/lease/i);
      expect(await env.store.get('/t/lease-cut/y', Val)).toBeUndefined();
    } finally {
      await cut.close();
      await proxy.close();
    }
  });
});
