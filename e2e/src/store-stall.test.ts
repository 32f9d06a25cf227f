import fs from 'node:fs/promises';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from './harness/appliance.js';
import type { ApiResponse } from './harness/api-client.js';
import { unreachableRemote } from './harness/race.js';

/** A short store deadline keeps the test fast; the default is 5 s (README). */
const DEADLINE_MS = 2_000;
/** What an answer may take beyond the deadline: a request may make one more store call after it. */
const MARGIN_MS = 2_500;
/** Longer than the nodeagent's status lease (10 s), so the lease really lapses. */
const STALL_MS = 14_000;

/** The appliance's etcd: the launcher's child whose program is etcd. */
async function etcdPid(app: Appliance): Promise<number> {
  for (const pid of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmd = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!/(^|\/)etcd$/.test(cmd[0] ?? '')) continue;
    if (cmd.some((a) => a.includes(`:${app.ports.etcdClient}`))) return Number(pid);
  }
  throw new Error('the appliance runs no etcd');
}

const timed = async (call: () => Promise<ApiResponse<any>>) => {
  const started = Date.now();
  const res = await call();
  return { res, ms: Date.now() - started };
};

/**
 * Issue 13 item 2: with the appliance's etcd stopped (SIGSTOP) every request answers 503
 * unavailable with Retry-After within the store deadline, /healthz says the store is down,
 * and after SIGCONT everything recovers without the nodeagent exiting. Also: an S3 remote on
 * a closed port answers 502 remote_refused naming the endpoint, never 500.
 */
describe('a stalled store and an unreachable remote', () => {
  let app: Appliance;
  let etcd: number | undefined;
  let libId: number;
  let remoteId: number;
  let closedPort: number;

  beforeAll(async () => {
    app = await Appliance.start({ env: { VTL_STORE_DEADLINE_MS: String(DEADLINE_MS) } });
    const pool = (await app.api.get('/api/pools')).body[0];
    const lib = await app.api.post('/api/libraries', {
      name: 'stall',
      product: '3573-TL',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 8,
      num_map: 1,
      label_prefix: 'STL',
      pool_id: pool.id,
    });
    expect(lib.status, lib.text).toBe(201);
    libId = lib.body.library;
    await app.apply();
    expect((await app.api.post('/api/cartridges', { library: libId, count: 1 })).status).toBe(200);
    // A port nothing listens on: taken, then released.
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closedPort = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const remote = await app.api.post('/api/remotes', unreachableRemote('closed', closedPort));
    expect(remote.status, remote.text).toBe(201);
    remoteId = remote.body.id;
  }, 300_000);
  afterAll(async () => {
    // Never leave etcd stopped: the appliance could not shut down.
    if (etcd) process.kill(etcd, 'SIGCONT');
    await app?.destroy();
  });

  it('answers 502 remote_refused naming the endpoint for a remote on a closed port', async () => {
    const endpoint = `127.0.0.1:${closedPort}`;
    const calls = [
      () => app.api.get(`/api/remotes/${remoteId}/objects`),
      () => app.api.post('/api/catalog/rebuild', { remote_id: remoteId }),
      () => app.api.delete(`/api/remotes/${remoteId}/objects?prefix=site/`),
    ];
    for (const call of calls) {
      const res = await call();
      expect(res.status, res.text).toBe(502);
      expect(res.body.error.code).toBe('remote_refused');
      expect(res.body.error.message).toContain(endpoint);
    }
    const test = await app.api.post(`/api/remotes/${remoteId}/test`, {});
    expect(test.status).toBe(200);
    expect(test.body.ok).toBe(false);
  });

  it('answers 503 with Retry-After within the deadline while etcd is stopped, then recovers', async () => {
    const nodeagent = await app.childPid('nodeagent/dist/main.js');
    expect(nodeagent).toBeDefined();
    const [cart] = (await app.api.get('/api/cartridges')).body;
    etcd = await etcdPid(app);
    process.kill(etcd, 'SIGSTOP');
    const stoppedAt = Date.now();
    try {
      // A view may be answered from a revision read begun up to 50 ms before it arrived (docs/api.md,
      // "Read views and read-your-writes"), such as the one of the read just above: past that window
      // nothing is served without etcd.
      await new Promise((r) => setTimeout(r, 100));
      // Every kind of request: a view, an auth lookup, a load, a mint.
      const answers = await Promise.all([
        timed(() => app.api.get('/api/status')),
        timed(() => app.api.get('/api/auth/whoami')),
        timed(() => app.api.post(`/api/libraries/${libId}/drives/0/load`, { label: cart.label })),
        timed(() => app.api.post('/api/cartridges', { library: libId, count: 1 })),
      ]);
      for (const { res, ms } of answers) {
        expect(res.status, res.text).toBe(503);
        expect(res.body.error.code).toBe('unavailable');
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
        expect(ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      }
      const health = await timed(() => app.plain.get('/healthz'));
      expect(health.res.status).toBe(503);
      expect(health.res.body).toMatchObject({ ok: false, down: ['store'] });
      expect(health.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      // Hold the stall past the nodeagent's status lease.
      await new Promise((r) => setTimeout(r, Math.max(0, STALL_MS - (Date.now() - stoppedAt))));
      const late = await timed(() => app.api.get('/api/status'));
      expect(late.res.status).toBe(503);
      expect(late.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    } finally {
      process.kill(etcd, 'SIGCONT');
      etcd = undefined;
    }

    // Recovery: every answer is honest meanwhile (200 or 503, never "not live; apply it first").
    const seen = new Set<number>();
    await waitFor(
      async () => {
        const mint = await app.api.post('/api/cartridges', { library: libId, count: 1 });
        seen.add(mint.status);
        if (mint.status !== 200 && mint.status !== 503) throw new Error(`mint answered ${mint.text}`);
        return mint.status === 200;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect([...seen].every((s) => s === 200 || s === 503)).toBe(true);
    await waitFor(async () => (await app.plain.get('/healthz')).status === 200, { timeoutMs: 30_000 });
    expect((await app.plain.get('/healthz')).body.ok).toBe(true);
    const status = await app.api.get('/api/status');
    expect(status.status).toBe(200);
    expect(status.body.libraries.find((l: any) => l.library.id === libId).library.live).toBe(true);
    expect((await app.api.get('/api/auth/whoami')).status).toBe(200);
    // The nodeagent took its lease back instead of exiting: the same process.
    expect(await app.childPid('nodeagent/dist/main.js')).toBe(nodeagent);
  }, 180_000);
});
