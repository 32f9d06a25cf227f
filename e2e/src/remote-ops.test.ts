import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Op, keys, type ErrorCode } from '@vtl/api';
import { writeTopology } from '@vtl/offsite';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { waitFor } from '@vtl/reconcile';
import type { Store } from '@vtl/store';
import { Appliance } from './harness/appliance.js';
import type { ApiResponse } from './harness/api-client.js';
import { startSilentServer, unreachableRemote } from './harness/race.js';

/** A short remote deadline keeps the test fast; the default is 30 s (README). */
const REMOTE_DEADLINE_MS = 3_000;
/** What an answer may take beyond the deadline: recording the op, the controller picking it up. */
const MARGIN_MS = 7_000;

const timed = async (call: () => Promise<ApiResponse<any>>) => {
  const started = Date.now();
  const res = await call();
  return { res, ms: Date.now() - started };
};

/**
 * Issue 13/14: the bucket work of the API (remote test, object listing and deletion, catalog
 * rebuild, recover) runs as operations of the controller, each whole S3 call bounded by
 * VTL_REMOTE_DEADLINE_MS: a remote that accepts TCP but never answers is 504
 * remote_unreachable, a closed port 502 remote_refused, both naming the endpoint and in bounded
 * time. A controller killed in the middle of a recovery resumes it.
 */
describe('remote operations run by the controller, bounded (real processes, real RGW)', () => {
  let app: Appliance;
  let rgw: TestRgw;
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let closedPort: number;
  let silentId: number;
  let closedId: number;
  let poolId: number;
  let store: Store;

  beforeAll(async () => {
    rgw = await startTestRgw();
    app = await Appliance.start({ env: { VTL_REMOTE_DEADLINE_MS: String(REMOTE_DEADLINE_MS) } });
    store = await app.connectStore();
    silent = await startSilentServer();
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closedPort = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    silentId = (await app.api.post('/api/remotes', unreachableRemote('silent', silent.port))).body.id;
    closedId = (await app.api.post('/api/remotes', unreachableRemote('closed', closedPort))).body.id;
    poolId = (await app.api.get('/api/pools')).body[0].id;
  }, 300_000);
  afterAll(async () => {
    await store?.close();
    await app?.destroy();
    await silent?.close();
    await rgw?.stop();
  });

  const bucketCalls = (id: number) =>
    [
      ['list', () => app.api.get(`/api/remotes/${id}/objects`)],
      ['rebuild', () => app.api.post('/api/catalog/rebuild', { remote_id: id })],
      ['delete', () => app.api.delete(`/api/remotes/${id}/objects?prefix=site/`)],
      [
        'recover',
        () =>
          app.api.post('/api/libraries/recover', {
            remote_id: id,
            system_name: 'site-a',
            library_serial: 'GONE0001',
            pool_id: poolId,
          }),
      ],
    ] as const;

  async function expectAnswers(id: number, port: number, status: number, code: ErrorCode) {
    const endpoint = `127.0.0.1:${port}`;
    for (const [what, call] of bucketCalls(id)) {
      const { res, ms } = await timed(call);
      expect(res.status, `${what}: ${res.text}`).toBe(status);
      expect(res.body.error.code, what).toBe(code);
      expect(res.body.error.message, what).toContain(endpoint);
      expect(ms, what).toBeLessThan(REMOTE_DEADLINE_MS + MARGIN_MS);
    }
    // A failed test is still 200 (§4.4), recorded on the remote.
    const { res, ms } = await timed(() => app.api.post(`/api/remotes/${id}/test`, {}));
    expect(res.status, res.text).toBe(200);
    expect(res.body.ok).toBe(false);
    expect(res.body.detail).toContain(endpoint);
    expect(ms).toBeLessThan(REMOTE_DEADLINE_MS + MARGIN_MS);
    expect((await app.api.get(`/api/remotes/${id}`)).body).toMatchObject({
      last_test_ok: false,
      last_test_detail: res.body.detail,
    });
    // Nothing was declared by the refused recoveries.
    expect((await app.api.get('/api/libraries')).body).toEqual([]);
  }

  it('a remote that accepts TCP but never answers: 504 remote_unreachable within the deadline', async () => {
    await expectAnswers(silentId, silent.port, 504, 'remote_unreachable');
  }, 120_000);

  it('a closed port: 502 remote_refused naming the endpoint', async () => {
    await expectAnswers(closedId, closedPort, 502, 'remote_refused');
  }, 120_000);

  it('a controller killed in the middle of a recovery resumes it; the route answers 201', async () => {
    const remote = await app.api.post('/api/remotes', rgw.remoteRequest('rgw'));
    expect(remote.status, remote.text).toBe(201);
    await writeTopology(rgw.remote(), {
      system: 'site-a',
      library_serial: 'RESUME01',
      name: 'resumed',
      product: '3573-TL',
      vendor: 'IBM',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 6,
      num_map: 1,
      label_prefix: 'RSM',
      written_at: new Date().toISOString(),
      cartridges: [{ label: 'RSM001L8', home_slot: 1 }],
    });
    const answer = app.api.post('/api/libraries/recover', {
      remote_id: remote.body.id,
      system_name: 'site-a',
      library_serial: 'RESUME01',
      pool_id: poolId,
    });
    // The recovery has declared its library and recorded its apply: kill the controller there.
    let recover: Op | undefined;
    await waitFor(
      async () => {
        const ops = (await store.list(keys.ops.prefix, Op)).items.map((i) => i.value);
        recover = ops.find((o) => o.kind === 'recover' && o.progress?.library !== undefined);
        return recover !== undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    expect(recover?.state, 'the recovery was still running when the controller was killed').toBe('running');
    const killed = await app.restartProcess('controller/dist/main.js', 'SIGKILL');
    const res = await answer;
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ serial: 'RESUME01', name: 'resumed', carts: 1, import_jobs: [] });
    expect(res.body.steps[0]).toMatch(/Declared library/);
    expect(res.body.steps).toContain('RSM001L8: no complete generation in the bucket; not imported');
    // It ran to its end in another controller, and declared one library, not two.
    const now = await app.childPid('controller/dist/main.js');
    expect(now).toBeDefined();
    expect(now).not.toBe(killed);
    const libraries = (await app.api.get('/api/libraries')).body;
    expect(libraries).toEqual([expect.objectContaining({ serial: 'RESUME01', state: 'active' })]);
    const applies = (await store.list(keys.ops.prefix, Op)).items.filter(
      (i) => i.value.kind === 'apply' && i.value.id === recover?.progress?.apply_op,
    );
    expect(applies.map((i) => i.value.state)).toEqual(['succeeded']);
  }, 300_000);
});
