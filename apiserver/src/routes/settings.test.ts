import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '@vtl/api';
import { startTestApp, type TestApp } from '../test/test-app.js';
import { deleteRemoteRecord } from '../services/remotes.js';

describe('settings, license and the OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const get = async (url: string) => (await t.app.inject({ method: 'GET', url, headers: t.admin })).json();
  const put = (payload: object) =>
    t.app.inject({ method: 'PUT', url: '/api/settings', headers: t.admin, payload });

  it('lists every key with its default; system.name shows the name in use', async () => {
    const settings = await get('/api/settings');
    expect(Object.keys(settings).sort()).toEqual(
      [
        'apikeys.enabled',
        'evict.threshold_pct',
        'export.default_remote',
        'export.ie_watcher',
        'fc.disabled_ports',
        'minting.enabled',
        'nag.no_offsite_dismissed',
        'system.name',
      ].sort(),
    );
    expect(settings['system.name']).toBe((await get('/api/system')).system_name);
  });

  it.each([
    [{ 'system.name': 'Upper' }, /system.name/],
    [{ 'system.name': '-lead' }, /system.name/],
    [{ 'system.name': 'a'.repeat(33) }, /system.name/],
    [{ 'system.name': '' }, /system.name/],
    [{ 'export.ie_watcher': '1' }, /export.ie_watcher/],
    [{ 'evict.threshold_pct': '101' }, /evict.threshold_pct/],
    [{ 'evict.threshold_pct': '12.5' }, /evict.threshold_pct/],
    [{ 'export.default_remote': 'abc' }, /export.default_remote/],
    [{ 'export.default_remote': '7' }, /no remote 7/],
    [{ 'fc.disabled_ports': 'naa.1234' }, /fc.disabled_ports/],
    [{ 'system.name': 'good', 'evict.threshold_pct': 'x' }, /evict.threshold_pct/],
  ])('refuses %j with 400 and writes nothing', async (body, message) => {
    const before = await get('/api/settings');
    const res = await put(body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(message);
    expect(await get('/api/settings')).toEqual(before);
  });

  it('takes any apikeys.enabled value; only 1 honours API keys (§2.13)', async () => {
    const key = (
      await t.app.inject({
        method: 'POST',
        url: '/api/apikeys',
        headers: t.admin,
        payload: { name: 'reader', role: 'read-only' },
      })
    ).json().key;
    const withKey = () =>
      t.app.inject({ method: 'GET', url: '/api/system', headers: { authorization: `Bearer ${key}` } });
    for (const value of ['yes', 'true', '2', '']) {
      const res = await put({ 'apikeys.enabled': value });
      expect(res.statusCode, value).toBe(200);
      expect((await get('/api/system')).apikeys_enabled, value).toBe(false);
      expect((await withKey()).statusCode, value).toBe(401);
    }
    expect((await put({ 'apikeys.enabled': '1' })).statusCode).toBe(200);
    expect((await withKey()).statusCode).toBe(200);
    expect((await put({ 'apikeys.enabled': '0' })).statusCode).toBe(200);
  });

  it('clears export.default_remote when its remote is deleted', async () => {
    const remote = (
      await t.app.inject({
        method: 'POST',
        url: '/api/remotes',
        headers: t.admin,
        payload: { name: 'default', bucket: 'b', access_key: 'a', secret_key: 's' },
      })
    ).json().id;
    expect((await put({ 'export.default_remote': String(remote) })).statusCode).toBe(200);
    const del = await t.app.inject({ method: 'DELETE', url: `/api/remotes/${remote}`, headers: t.admin });
    expect(del.statusCode, del.body).toBe(200);
    expect((await get('/api/settings'))['export.default_remote']).toBe('');
  });

  it('refuses an unknown key with 400 and writes none of the others', async () => {
    const res = await put({ 'system.name': 'fine', 'no.such.key': '1' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/no\.such\.key.*nothing was written/);
    expect((await get('/api/settings'))['system.name']).not.toBe('fine');
  });

  it('writes several keys at once and normalises values', async () => {
    const res = await put({
      'system.name': 'site-a_1',
      'export.ie_watcher': 'ON',
      'evict.threshold_pct': '85',
      'fc.disabled_ports': '21:00:00:24:ff:00:00:01, 21000024FF000002',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      'system.name': 'site-a_1',
      'export.ie_watcher': 'on',
      'evict.threshold_pct': '85',
      'fc.disabled_ports': 'naa.21000024ff000001,naa.21000024ff000002',
    });
    expect((await get('/api/system')).system_name).toBe('site-a_1');
  });

  it('clears nag.no_offsite_dismissed when the last remote is deleted', async () => {
    await t.store.put(keys.remotes.one(1), { id: 1 });
    await t.store.put(keys.remotes.one(2), { id: 2 });
    expect((await put({ 'export.default_remote': '2', 'nag.no_offsite_dismissed': '1' })).statusCode).toBe(
      200,
    );
    expect(await deleteRemoteRecord(t.store, 1)).toBe(true);
    expect((await get('/api/settings'))['nag.no_offsite_dismissed']).toBe('1');
    expect(await deleteRemoteRecord(t.store, 2)).toBe(true);
    expect((await get('/api/settings'))['nag.no_offsite_dismissed']).toBe('0');
    expect(await deleteRemoteRecord(t.store, 2)).toBe(false);
  });

  it('serves an OpenAPI document with every route, its role and the error body', async () => {
    const doc = await get('/api/openapi.json');
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.schemas.ErrorBody.properties.error).toBeDefined();
    expect(doc.paths['/api/settings'].put['x-vtl-role']).toBe('admin');
    expect(doc.paths['/api/settings'].get['x-vtl-role']).toBe('read-only');
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    expect(doc.paths['/api/libraries/{lib}/drives/{index}/load'].post.requestBody).toBeDefined();
    expect(doc.paths['/api/users'].post.responses['403'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorBody',
    );
    for (const ops of Object.values<any>(doc.paths))
      for (const op of Object.values<any>(ops))
        expect(['public', 'read-only', 'admin']).toContain(op['x-vtl-role']);
  });

  it('derives the support fingerprint from the machine identity', async () => {
    const license = await get('/api/license');
    expect(license.fingerprint).toMatch(/^VTL(-[0-9A-Z]{5}){4}$/);
    expect(license).toMatchObject({ changed: false, previous: '' });
    // An OS reinstall: a new machine id.
    await fs.writeFile(t.machineIdFile, 'machine-b\n');
    const moved = await get('/api/license');
    expect(moved).toEqual({
      fingerprint: expect.not.stringMatching(license.fingerprint),
      changed: true,
      previous: license.fingerprint,
    });
    const ack = await t.app.inject({ method: 'POST', url: '/api/license/ack', headers: t.admin });
    expect(ack.json()).toEqual({ ok: true, fingerprint: moved.fingerprint });
    expect(await get('/api/license')).toEqual({
      fingerprint: moved.fingerprint,
      changed: false,
      previous: '',
    });
  });
});
