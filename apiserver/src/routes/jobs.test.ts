import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job, isoNow, keys } from '@vtl/api';
import { startTestApp, type TestApp } from '../test/test-app.js';

const row = (id: number, kind: Job['kind'], state: Job['state'], label: string, remote_id: number) =>
  Job.parse({
    id,
    kind,
    state,
    label,
    library: 1,
    remote_id,
    generation: '20260101T000000Z',
    bytes_done: 0,
    chunks_done: 0,
    detail: '',
    error: state === 'failed' || state === 'interrupted' ? 'S3 unreachable' : '',
    finished_at: state === 'failed' ? isoNow() : '',
    created_at: isoNow(),
    updated_at: isoNow(),
  });

/** Every job row the tests start from: id, kind, state, label, remote. */
const ROWS = [
  row(1, 'export', 'succeeded', 'JOB001L8', 1),
  row(2, 'export', 'failed', 'JOB002L8', 1),
  row(3, 'evict', 'queued', 'JOB003L8', 2),
  row(4, 'import', 'downloading', 'JOB004L8', 2),
  row(5, 'import', 'interrupted', 'JOB001L8', 1),
  row(6, 'export', 'detected', 'JOB006L8', 2),
  row(7, 'import', 'cancelled', 'JOB007L8', 1),
  row(8, 'import', 'failed', 'JOB008L8', 2),
  row(9, 'export', 'interrupted', 'JOB009L8', 1),
];

describe('the jobs API (docs/api.md "Jobs")', () => {
  let t: TestApp;
  const req = (method: 'GET' | 'POST', url: string) => t.app.inject({ method, url, headers: t.admin });
  const ids = async (query: string) => {
    const res = await req('GET', `/api/jobs${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().map((j: Job) => j.id);
  };
  const stored = async (id: number) => (await t.store.get(keys.jobs.one(id), Job))!.value;

  beforeAll(async () => {
    t = await startTestApp();
    for (const r of ROWS) await t.store.put(keys.jobs.one(r.id), r);
    await t.store.put(keys.jobLedgers.one(9), { chunks: [] });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists every job newest first, filtered by state, kind, label, remote_id and limit', async () => {
    expect(await ids('')).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(await ids('?state=failed')).toEqual([8, 2]);
    expect(await ids('?state=failed,interrupted')).toEqual([9, 8, 5, 2]);
    expect(await ids('?kind=import')).toEqual([8, 7, 5, 4]);
    expect(await ids('?kind=evict,export&state=queued,detected')).toEqual([6, 3]);
    expect(await ids('?label=job001l8')).toEqual([5, 1]);
    expect(await ids('?remote_id=2')).toEqual([8, 6, 4, 3]);
    expect(await ids('?remote_id=2&kind=import&state=failed')).toEqual([8]);
    expect(await ids('?limit=3')).toEqual([9, 8, 7]);
    expect(await ids('?label=NOSUCH01')).toEqual([]);
  });

  it('refuses unknown filter values with 400 naming the allowed ones', async () => {
    const state = await req('GET', '/api/jobs?state=failed,bogus');
    expect(state.statusCode).toBe(400);
    expect(state.json().error.message).toMatch(/"bogus".*failed/);
    const kind = await req('GET', '/api/jobs?kind=copy');
    expect(kind.statusCode).toBe(400);
    expect(kind.json().error.message).toMatch(/export, evict, import/);
    expect((await req('GET', '/api/jobs?limit=0')).statusCode).toBe(400);
    expect((await req('GET', '/api/jobs?remote_id=abc')).statusCode).toBe(400);
  });

  it('returns one job, 404 for an unknown id', async () => {
    const one = await req('GET', '/api/jobs/4');
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ id: 4, kind: 'import', state: 'downloading', label: 'JOB004L8' });
    const missing = await req('GET', '/api/jobs/999');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.message).toMatch(/GET \/api\/jobs/);
    expect((await req('POST', '/api/jobs/999/retry')).statusCode).toBe(404);
    expect((await req('POST', '/api/jobs/999/cancel')).statusCode).toBe(404);
  });

  it('retries only failed or interrupted jobs, back to their first state; 409 otherwise, unchanged', async () => {
    for (const id of [1, 3, 4, 6, 7]) {
      const before = await stored(id);
      const res = await req('POST', `/api/jobs/${id}/retry`);
      expect(res.statusCode, `job ${id}`).toBe(409);
      expect(res.json().error.message).toMatch(/only failed or interrupted/);
      expect(await stored(id)).toEqual(before);
    }
    const exp = await req('POST', '/api/jobs/2/retry');
    expect(exp.statusCode).toBe(200);
    expect(exp.json()).toMatchObject({ id: 2, state: 'detected', attempts: 2, error: '', finished_at: '' });
    const imp = await req('POST', '/api/jobs/5/retry');
    expect(imp.json()).toMatchObject({ id: 5, state: 'queued', attempts: 2, error: '' });
    expect(await stored(5)).toMatchObject({ state: 'queued', attempts: 2 });
    // A retried job is no longer retryable until it fails again.
    expect((await req('POST', '/api/jobs/5/retry')).statusCode).toBe(409);
  });

  it('cancels only detected, queued, interrupted or failed jobs, dropping the ledger; 409 otherwise', async () => {
    // A failed job references its cartridge (its delete is refused) until it is cancelled.
    await t.store.put(keys.jobs.one(10), row(10, 'export', 'failed', 'JOB010L8', 1));
    for (const id of [1, 4, 7]) {
      const before = await stored(id);
      const res = await req('POST', `/api/jobs/${id}/cancel`);
      expect(res.statusCode, `job ${id}`).toBe(409);
      expect(res.json().error.message).toMatch(/only detected or queued or interrupted or failed/);
      expect(await stored(id)).toEqual(before);
    }
    for (const id of [3, 6, 9, 10]) {
      const res = await req('POST', `/api/jobs/${id}/cancel`);
      expect(res.statusCode, `job ${id}`).toBe(200);
      expect(res.json()).toMatchObject({ id, state: 'cancelled', detail: 'cancelled by request' });
      expect(res.json().finished_at).not.toBe('');
    }
    expect(await t.store.count(keys.jobLedgers.prefix)).toBe(0);
    expect((await req('POST', '/api/jobs/9/cancel')).statusCode).toBe(409);
  });

  it('refuses a retry while a graceful restart drains, and a malformed id', async () => {
    await t.store.put(keys.drain, { draining: true });
    try {
      const res = await req('POST', '/api/jobs/8/retry');
      expect(res.statusCode).toBe(409);
      expect((await stored(8)).state).toBe('failed');
    } finally {
      await t.store.delete(keys.drain);
    }
    expect((await req('GET', '/api/jobs/abc')).statusCode).toBe(404);
  });

  it('refuses a retry with 409 while an apply or library delete runs, and takes it once that finished', async () => {
    const op = { id: 77, kind: 'apply', executor: 'controller', params: {}, state: 'running', steps: [] };
    await t.store.put(keys.ops.one(77), { ...op, requested_by: '', created_at: isoNow() });
    await t.store.put(keys.exclusiveOp, { op: 77 });
    try {
      const res = await req('POST', '/api/jobs/8/retry');
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json().error).toMatchObject({ code: 'conflict', details: { op: 77 } });
      expect(res.json().error.message).toMatch(/an apply \(operation 77, running\)/);
      expect((await stored(8)).state).toBe('failed');
      await t.store.put(keys.ops.one(77), {
        ...op,
        state: 'succeeded',
        requested_by: '',
        created_at: isoNow(),
      });
      expect((await req('POST', '/api/jobs/8/retry')).statusCode).toBe(200);
    } finally {
      await t.store.delete(keys.exclusiveOp);
    }
  });
});
