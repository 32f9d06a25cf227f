import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogEntry, Job, RemoteSecret, isoNow, keys } from '@vtl/api';
import { pino } from 'pino';
import { EventJournal } from '@vtl/store';
import { startRemoteOps } from '@vtl/controller';
import { startTestApp, type TestApp } from '../test/test-app.js';

const SECRET = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY';

describe('remotes and the catalog (§4.4)', () => {
  let t: TestApp;
  // The controller's runner of remote ops: the apiserver records them, the controller talks to S3.
  let ops: Awaited<ReturnType<typeof startRemoteOps>> | undefined;
  beforeAll(async () => {
    t = await startTestApp();
    ops = await startRemoteOps({
      store: t.store,
      journal: new EventJournal(t.store),
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await ops?.stop();
    await t?.close();
  });

  const req: TestApp['call'] = (method, url, payload) => t.call(method, url, payload);
  const create = (extra: object = {}) =>
    req('POST', '/api/remotes', {
      name: 'site-b',
      bucket: 'tapes',
      access_key: 'AKIAEXAMPLE',
      secret_key: SECRET,
      ...extra,
    });

  it('creates a remote with the defaults of §8 and never returns the secret', async () => {
    const res = await create();
    expect(res.statusCode).toBe(201);
    expect(res.body).not.toContain(SECRET);
    expect(res.json()).toMatchObject({
      name: 'site-b',
      endpoint: 's3.amazonaws.com',
      use_ssl: true,
      path_style: false,
      region: '',
      prefix: '',
      has_secret: true,
      last_test_at: '',
    });
    expect(res.json()).not.toHaveProperty('secret_key');
    const list = await req('GET', '/api/remotes');
    expect(list.body).not.toContain(SECRET);
    expect(list.json().map((r: { name: string }) => r.name)).toContain('site-b');
    // The record itself holds no secret: only the separate secret key does.
    const raw = await t.store.get(keys.remotes.one(res.json().id), RemoteSecret.partial());
    expect(raw?.value.secret_key).toBeUndefined();
  });

  it.each([
    [{ bucket: 'b', access_key: 'a', secret_key: 's' }, /name/],
    [{ name: 'n', access_key: 'a', secret_key: 's' }, /bucket/],
    [{ name: 'n', bucket: 'b', secret_key: 's' }, /access_key/],
    [{ name: 'n', bucket: 'b', access_key: 'a' }, /secret_key/],
    [{ name: 'n', bucket: 'b', access_key: 'a', secret_key: '' }, /secret_key/],
    [{ name: 'n', bucket: 'b', access_key: 'a', secret_key: 's', endpoint: 'https://x/y' }, /endpoint/],
  ])('refuses %j with 400 and creates nothing', async (body, message) => {
    const before = (await req('GET', '/api/remotes')).json().length;
    const res = await req('POST', '/api/remotes', body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(message);
    expect((await req('GET', '/api/remotes')).json().length).toBe(before);
  });

  it('keeps the stored secret on an update with an empty or omitted secret_key', async () => {
    const id = (await create({ name: 'keep' })).json().id;
    const secret = async () =>
      (await t.store.get(keys.remoteSecrets.one(id), RemoteSecret))?.value.secret_key;
    const put = await req('PUT', `/api/remotes/${id}`, { name: 'kept', secret_key: '', path_style: true });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ name: 'kept', path_style: true, bucket: 'tapes', has_secret: true });
    expect(await secret()).toBe(SECRET);
    await req('PUT', `/api/remotes/${id}`, { region: 'eu-1' });
    expect(await secret()).toBe(SECRET);
    await req('PUT', `/api/remotes/${id}`, { secret_key: 'another-secret' });
    expect(await secret()).toBe('another-secret');
    expect((await req('PUT', '/api/remotes/999', { name: 'x' })).statusCode).toBe(404);
  });

  it('answers 200 with ok false when the probe fails, and records the result', async () => {
    const id = (await create({ name: 'down', endpoint: '127.0.0.1:1', use_ssl: false })).json().id;
    const res = await req('POST', `/api/remotes/${id}/test`);
    expect(res.statusCode).toBe(200);
    expect(res.json().ok).toBe(false);
    expect(res.json().detail).not.toBe('');
    expect(res.body).not.toContain(SECRET);
    const remote = (await req('GET', `/api/remotes/${id}`)).json();
    expect(remote).toMatchObject({ last_test_ok: false, last_test_detail: res.json().detail });
    expect(remote.last_test_at).not.toBe('');
    expect((await req('POST', '/api/remotes/999/test')).statusCode).toBe(404);
  });

  it('refuses an objects deletion whose prefix does not end with / (structurally)', async () => {
    const id = (await create({ name: 'objs', endpoint: '127.0.0.1:1', use_ssl: false })).json().id;
    for (const prefix of ['site/SER/ABC001L8', '', '/', 'a/../'])
      expect((await req('DELETE', `/api/remotes/${id}/objects`, { prefix })).statusCode, prefix).toBe(400);
    const q = await t.app.inject({
      method: 'DELETE',
      url: `/api/remotes/${id}/objects?prefix=abc`,
      headers: t.admin,
    });
    expect(q.statusCode).toBe(400);
    expect(q.json().error.message).toMatch(/end with "\/"/);
  });

  it('looks at the id before the body: a bad id is 404 whatever the body, as before', async () => {
    expect((await req('PUT', '/api/remotes/abc', { use_ssl: 'no' })).statusCode).toBe(404);
    expect((await req('DELETE', '/api/remotes/abc/objects', { prefix: 7 })).statusCode).toBe(404);
    const id = (await create({ name: 'order', endpoint: '127.0.0.1:1', use_ssl: false })).json().id;
    const bad = await req('PUT', `/api/remotes/${id}`, { use_ssl: 'no' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('validation_failed');
    expect(bad.json().error.message).toMatch(/use_ssl/);
    // A query prefix stands in for a refused body, as it always did.
    const q = await t.app.inject({
      method: 'DELETE',
      url: `/api/remotes/${id}/objects?prefix=a/../`,
      headers: t.admin,
      payload: { prefix: 7, extra: true },
    });
    expect(q.statusCode).toBe(400);
    expect(q.json().error.message).toMatch(/name a folder under the remote prefix/);
  });

  it('catalog: 400 without remote_id or for an unknown remote', async () => {
    expect((await req('GET', '/api/catalog')).statusCode).toBe(400);
    expect((await req('GET', '/api/catalog?remote_id=abc')).statusCode).toBe(400);
    expect((await req('GET', '/api/catalog?remote_id=999')).statusCode).toBe(400);
    expect((await req('POST', '/api/catalog/rebuild', {})).statusCode).toBe(400);
  });

  it('deletes a remote with its secret and cached catalog, restoring the no-offsite warning', async () => {
    for (const r of (await req('GET', '/api/remotes')).json()) await req('DELETE', `/api/remotes/${r.id}`);
    const id = (await create({ name: 'last' })).json().id;
    await req('PUT', '/api/settings', { 'nag.no_offsite_dismissed': '1' });
    const entry: CatalogEntry = {
      remote_id: id,
      system_name: 'site-a',
      library_serial: 'SER1',
      cart_label: 'CAT001L8',
      generation: '20260101T000000Z',
      logical_bytes: 1,
      stored_bytes: 1,
      chunk_count: 1,
      exported_at: isoNow(),
      synced_at: isoNow(),
    };
    await t.store.put(keys.catalog.one(id, 'site-a', 'SER1', 'CAT001L8', entry.generation), entry);
    expect((await req('GET', `/api/catalog?remote_id=${id}`)).json()).toEqual([entry]);

    // Refused while a job uses it.
    const job = Job.parse({
      id: 77,
      kind: 'export',
      state: 'uploading',
      label: 'CAT001L8',
      library: 1,
      remote_id: id,
      generation: entry.generation,
      bytes_done: 0,
      chunks_done: 0,
      detail: '',
      created_at: isoNow(),
      updated_at: isoNow(),
    });
    await t.store.put(keys.jobs.one(77), job);
    expect((await req('DELETE', `/api/remotes/${id}`)).statusCode).toBe(409);
    await t.store.put(keys.jobs.one(77), { ...job, state: 'succeeded' });

    const res = await req('DELETE', `/api/remotes/${id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(await t.store.get(keys.remoteSecrets.one(id), RemoteSecret)).toBeUndefined();
    expect(await t.store.count(keys.catalog.remote(id))).toBe(0);
    expect((await req('GET', '/api/settings')).json()['nag.no_offsite_dismissed']).not.toBe('1');
    expect((await req('DELETE', `/api/remotes/${id}`)).statusCode).toBe(404);
  });
});
