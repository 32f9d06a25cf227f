import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CartridgeSpec, Job, isoNow, keys, type CatalogEntry, type ObservedCartridge } from '@vtl/api';
import { waitFor } from '@vtl/store';
import { putTestLibrary, putTestNodeStatus, putTestPool } from '@vtl/store/testing';
import { startTestApp, type TestApp } from '../test/test-app.js';

const GEN = '20260101T120000Z';
/** Stands for the remote the suite creates (its id is known only once it runs). */
const REMOTE = -1;

/** Records of one live library with cartridges, as the nodeagent and apiserver would write them. */
async function seed(t: TestApp, carts: Partial<ObservedCartridge>[]) {
  const s = t.store;
  await putTestPool(s);
  await putTestLibrary(s);
  const observed = carts.map((c, i) => ({
    label: `ABC00${i + 1}L8`,
    library: 1,
    size_bytes: 100,
    phys_bytes: 100,
    modified: isoNow(),
    location: `slot:${i + 1}`,
    local_state: 'resident' as const,
    ...c,
  }));
  for (const [i, c] of observed.entries())
    await s.put(
      keys.cartridges.one(c.label),
      CartridgeSpec.parse({
        label: c.label,
        library: 1,
        home_slot: i + 1,
        created_at: isoNow(),
        last_export_gen: i === 0 ? GEN : '',
      }),
    );
  await putTestNodeStatus(s, observed, {
    libraries: [{ id: 1, serial: 'SER0001', changer_sg: '', drives: [], slots: [] }],
  });
}

describe('export, evict and import jobs (§4.5 rules 3–7) and the jobs API', () => {
  let t: TestApp;
  let remote: number;
  const req = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
    t.app.inject({
      method,
      url,
      headers: t.admin,
      ...(payload
        ? { payload: payload.remote_id === REMOTE ? { ...payload, remote_id: remote } : payload }
        : {}),
    });
  const system = async () => (await req('GET', '/api/system')).json().system_name as string;
  const catalog = async (label: string, generation = GEN) => {
    const entry: CatalogEntry = {
      remote_id: remote,
      system_name: await system(),
      library_serial: 'SER0001',
      cart_label: label,
      generation,
      logical_bytes: 100,
      stored_bytes: 10,
      chunk_count: 1,
      exported_at: isoNow(),
      synced_at: isoNow(),
    };
    await t.store.put(keys.catalog.one(remote, entry.system_name, 'SER0001', label, generation), entry);
  };

  beforeAll(async () => {
    t = await startTestApp();
    await seed(t, [{}, { location: 'drive:0' }, { local_state: 'evicted' }, {}]);
    remote = (
      await req('POST', '/api/remotes', { name: 'r', bucket: 'b', access_key: 'a', secret_key: 's' })
    ).json().id;
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    // Every case starts without unfinished jobs (and without a drain).
    await t.store.put(keys.drain, { draining: false });
    for (const j of (await t.store.list(keys.jobs.prefix, Job)).items)
      if (!['succeeded', 'failed', 'cancelled'].includes(j.value.state))
        await t.store.put(j.key, { ...j.value, state: 'cancelled' });
  });

  it('refused exports leave the job id counter: the next accepted one gets the next id', async () => {
    const first = await req('POST', '/api/cartridges/ABC001L8/export', { remote_id: REMOTE });
    expect(first.statusCode, first.body).toBe(201);
    for (let i = 0; i < 3; i++) {
      // The label is held by the first job (409); a remote that does not exist (400).
      expect((await req('POST', '/api/cartridges/ABC001L8/export', { remote_id: REMOTE })).statusCode).toBe(
        409,
      );
      expect((await req('POST', '/api/cartridges/ABC004L8/export', { remote_id: 999 })).statusCode).toBe(400);
    }
    const next = await req('POST', '/api/cartridges/ABC004L8/export', { remote_id: REMOTE });
    expect(next.statusCode, next.body).toBe(201);
    expect(next.json().id).toBe(first.json().id + 1);
  });

  it('creates an export job in detected with the given generation', async () => {
    const res = await req('POST', '/api/cartridges/abc001l8/export', {
      remote_id: REMOTE,
      generation: '20260202T000000Z',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      kind: 'export',
      state: 'detected',
      label: 'ABC001L8',
      remote_id: remote,
      generation: '20260202T000000Z',
      library: 1,
      library_serial: 'SER0001',
      node: 'n1',
      bytes_done: 0,
      chunks_done: 0,
    });
    expect((await req('GET', '/api/system')).json().active_jobs).toBe(1);
    // A second job on the same label waits for the first.
    expect((await req('POST', '/api/cartridges/ABC001L8/export', { remote_id: REMOTE })).statusCode).toBe(
      409,
    );
    // The library-wide refusals see it.
    expect((await req('POST', '/api/libraries/apply', { confirm: 'apply' })).statusCode).toBe(400);
    const events = (await req('GET', '/api/events/search?kind=job_update')).json();
    expect(events[0].subject).toBe(`job:${res.json().id}`);
  });

  it.each([
    ['/api/cartridges/NOPE01L8/export', { remote_id: REMOTE }, 404],
    ['/api/cartridges/ABC001L8/export', { remote_id: 999 }, 400],
    ['/api/cartridges/ABC001L8/export', { remote_id: REMOTE, generation: '2026-01-01' }, 400],
    ['/api/cartridges/ABC001L8/export', {}, 400],
    ['/api/cartridges/ABC003L8/export', { remote_id: REMOTE }, 400],
    ['/api/cartridges/NOPE01L8/evict', { remote_id: REMOTE }, 404],
    ['/api/cartridges/ABC004L8/evict', { remote_id: REMOTE }, 400],
    ['/api/cartridges/ABC001L8/evict', { remote_id: REMOTE, generation: '20990101T000000Z' }, 400],
    ['/api/cartridges/ABC002L8/evict', { remote_id: REMOTE }, 400],
    ['/api/cartridges/ABC003L8/evict', { remote_id: REMOTE }, 400],
    ['/api/cartridges/ABC001L8/import', { remote_id: REMOTE, generation: GEN }, 409],
    ['/api/cartridges/NEW001L8/import', { remote_id: REMOTE, generation: GEN }, 400],
    [
      '/api/cartridges/NEW001L8/import',
      { remote_id: REMOTE, generation: GEN, system_name: 'other', target_library: 9 },
      400,
    ],
    ['/api/cartridges/NEW001L8/import', { remote_id: REMOTE, generation: GEN, system_name: 'other' }, 400],
    ['/api/cartridges/ABC003L8/import', { remote_id: REMOTE, generation: '20990101T000000Z' }, 400],
    ['/api/cartridges/ABC003L8/import', { remote_id: REMOTE }, 400],
    ['/api/cartridges/ABC003L8/import', { remote_id: 999, generation: GEN }, 400],
  ])('%s %j → %i and no job', async (url, body, status) => {
    const before = await t.store.count(keys.jobs.prefix);
    const res = await req('POST', url, body);
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json().error.message).not.toBe('');
    expect(await t.store.count(keys.jobs.prefix)).toBe(before);
  });

  it('answers 409 to every job-creating call while a graceful restart drains', async () => {
    await catalog('ABC001L8');
    await catalog('ABC003L8');
    await t.store.put(keys.drain, { draining: true });
    for (const [url, body] of [
      ['/api/cartridges/ABC001L8/export', { remote_id: REMOTE }],
      ['/api/cartridges/ABC001L8/evict', { remote_id: REMOTE }],
      ['/api/cartridges/ABC003L8/import', { remote_id: REMOTE, generation: GEN }],
    ] as const) {
      const res = await req('POST', url, body);
      expect(res.statusCode).toBe(409);
      expect(res.json().error.code).toBe('draining');
    }
  });

  it('creates evict and same-system import jobs in queued when the catalog has the generation', async () => {
    await catalog('ABC001L8');
    await catalog('ABC003L8');
    const evict = await req('POST', '/api/cartridges/ABC001L8/evict', { remote_id: REMOTE });
    expect(evict.statusCode, evict.body).toBe(201);
    expect(evict.json()).toMatchObject({ kind: 'evict', state: 'queued', generation: GEN });
    const imp = await req('POST', '/api/cartridges/ABC003L8/import', { remote_id: REMOTE, generation: GEN });
    expect(imp.statusCode, imp.body).toBe(201);
    expect(imp.json()).toMatchObject({
      kind: 'import',
      state: 'queued',
      target_library: 0,
      system_name: await system(),
    });
  });

  it('lists, filters, cancels and retries jobs', async () => {
    const a = (await req('POST', '/api/cartridges/ABC004L8/export', { remote_id: REMOTE })).json();
    expect(a.generation).toMatch(/^\d{8}T\d{6}Z$/);
    const list = (await req('GET', '/api/jobs?kind=export&state=detected')).json();
    expect(list.map((j: Job) => j.id)).toEqual([a.id]);
    expect((await req('GET', '/api/jobs?label=abc004l8&limit=1')).json()[0].id).toBe(a.id);
    expect((await req('GET', '/api/jobs?state=bogus')).statusCode).toBe(400);
    expect((await req('GET', `/api/jobs/${a.id}`)).json().id).toBe(a.id);
    expect((await req('GET', '/api/jobs/9999')).statusCode).toBe(404);

    expect((await req('POST', `/api/jobs/${a.id}/retry`)).statusCode).toBe(409);
    const cancelled = await req('POST', `/api/jobs/${a.id}/cancel`);
    expect(cancelled.json()).toMatchObject({ state: 'cancelled' });
    expect((await req('POST', `/api/jobs/${a.id}/cancel`)).statusCode).toBe(409);

    await t.store.put(keys.jobs.one(a.id), { ...a, state: 'failed', error: 'S3 unreachable' });
    const retried = await req('POST', `/api/jobs/${a.id}/retry`);
    expect(retried.json()).toMatchObject({ state: 'detected', attempts: 2, error: '' });
    await t.store.put(keys.drain, { draining: true });
    await t.store.put(keys.jobs.one(a.id), { ...a, state: 'interrupted' });
    expect((await req('POST', `/api/jobs/${a.id}/retry`)).statusCode).toBe(409);
  });

  it('refuses to delete a cartridge while any job references it, retryable ones included (§4.5 rule 2)', async () => {
    const del = () =>
      t.app.inject({
        method: 'DELETE',
        url: '/api/cartridges/ABC004L8',
        headers: t.admin,
        payload: { confirm: 'ABC004L8' },
      });
    const job = (await req('POST', '/api/cartridges/ABC004L8/export', { remote_id: REMOTE })).json();
    for (const state of ['interrupted', 'failed'] as const) {
      await t.store.put(keys.jobs.one(job.id), { ...job, state });
      const refused = await del();
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json().error.message).toContain(`job ${job.id} (${state})`);
      expect((await t.store.get(keys.cartridges.one('ABC004L8'), CartridgeSpec))?.value.deleting).toBeFalsy();
    }
    // A failed job can be cancelled; then nothing references the cartridge and the delete goes
    // ahead (this test stands in for the nodeagent that removes the record once erased).
    expect((await req('POST', `/api/jobs/${job.id}/cancel`)).json()).toMatchObject({ state: 'cancelled' });
    const deleted = del();
    await waitFor(
      async () =>
        (await t.store.get(keys.cartridges.one('ABC004L8'), CartridgeSpec))?.value.deleting === true,
      { timeoutMs: 5_000 },
    );
    await t.store.delete(keys.cartridges.one('ABC004L8'));
    expect((await deleted).statusCode).toBe(200);
  });

  it('counts catalog labels as used when choosing the next label', async () => {
    await catalog('ABC009L8');
    const next = await req('GET', '/api/libraries/1/next-label');
    expect(next.json().label).toBe('ABC010L8');
  });
});
