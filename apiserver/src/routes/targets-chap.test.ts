import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InitiatorChapSecret, InitiatorRecord, keys } from '@vtl/api';
import { startTestApp, type TestApp } from '../test/test-app.js';

const HOST = 'iqn.2026-11.test.chap:host1';
const SECRET = 'Host1-Secret-12';
const MUTUAL = 'Target-Secret-34';

describe('CHAP on iSCSI initiators (beyond the spec)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const call: TestApp['call'] = (method, url, payload) => t.call(method, url, payload);
  const stored = async () => ({
    record: (await t.store.get(keys.initiators.one(HOST), InitiatorRecord))?.value,
    secret: (await t.store.get(keys.initiatorSecrets.one(HOST), InitiatorChapSecret))?.value,
  });
  const shown = async () =>
    (await call('GET', '/api/targets')).json().initiators.find((i: { wwpn: string }) => i.wwpn === HOST);

  it('registers an initiator with one-way CHAP: usernames shown, the secret stored apart and never returned', async () => {
    const res = await call('POST', '/api/targets/acls', {
      wwpn: HOST,
      fabric: 'iscsi',
      chap: { username: 'host1', secret: SECRET },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain(SECRET);
    const chap = { enabled: true, username: 'host1', mutual: false, mutual_username: '' };
    expect(res.json().initiators.find((i: { wwpn: string }) => i.wwpn === HOST).chap).toEqual(chap);
    expect((await shown()).chap).toEqual(chap);
    expect((await call('GET', '/api/targets')).body).not.toContain(SECRET);
    expect(await stored()).toEqual({
      record: expect.objectContaining({ chap: { username: 'host1', mutual_username: '' } }),
      secret: { username: 'host1', secret: SECRET, mutual_username: '', mutual_secret: '' },
    });
  });

  it.each([
    [{ username: 'host1', secret: 'short' }, /chap.secret is 12 to 64/],
    [{ username: 'host1', secret: 'x'.repeat(65) }, /chap.secret is 12 to 64/],
    [{ username: 'host1', secret: 'has a space 12' }, /visible ASCII/],
    [{ username: 'host\u0001', secret: SECRET }, /visible ASCII/],
    [{ username: '', secret: SECRET }, /chap.username is required/],
    [{ secret: SECRET }, /username/],
    [{ username: 'host1', secret: SECRET, mutual_secret: MUTUAL }, /mutual_username and mutual_secret/],
    [{ username: 'host1', secret: SECRET, mutual_username: 'vtl' }, /mutual_username and mutual_secret/],
    [{ username: 'host1', secret: SECRET, mutual_username: 'vtl', mutual_secret: SECRET }, /must differ/],
    [{ username: 'host1', secret: SECRET, extra: 1 }, /unknown field/],
  ])('refuses chap %j with 400, changes nothing and echoes no secret', async (chap, message) => {
    const before = await stored();
    for (const res of [
      await call('PUT', `/api/targets/acls/${HOST}`, { chap }),
      await call('POST', '/api/targets/acls', { wwpn: 'iqn.2026-11.test.chap:other', fabric: 'iscsi', chap }),
    ]) {
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toMatch(message);
      for (const s of [SECRET, MUTUAL]) expect(res.body).not.toContain(s);
    }
    expect(await stored()).toEqual(before);
    expect(await t.store.get(keys.initiators.one('iqn.2026-11.test.chap:other'), InitiatorRecord)).toBe(
      undefined,
    );
  });

  it('refuses CHAP on a Fibre Channel initiator', async () => {
    const res = await call('POST', '/api/targets/acls', {
      wwpn: 'naa.21000024ff0000c1',
      chap: { username: 'fc', secret: SECRET },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/iSCSI initiators/);
    expect(await t.store.get(keys.initiators.one('naa.21000024ff0000c1'), InitiatorRecord)).toBe(undefined);
  });

  it('PUT sets mutual CHAP, keeps it when chap is left out, and null turns CHAP off', async () => {
    const res = await call('PUT', `/api/targets/acls/${HOST}`, {
      chap: { username: 'host1', secret: SECRET, mutual_username: 'vtl-target', mutual_secret: MUTUAL },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain(MUTUAL);
    expect((await shown()).chap).toEqual({
      enabled: true,
      username: 'host1',
      mutual: true,
      mutual_username: 'vtl-target',
    });
    expect((await stored()).secret).toEqual({
      username: 'host1',
      secret: SECRET,
      mutual_username: 'vtl-target',
      mutual_secret: MUTUAL,
    });

    expect((await call('PUT', `/api/targets/acls/${HOST}`, { alias: 'backup' })).statusCode).toBe(200);
    expect(await shown()).toMatchObject({ alias: 'backup', chap: { enabled: true, mutual: true } });
    expect((await stored()).secret?.mutual_secret).toBe(MUTUAL);

    expect((await call('PUT', `/api/targets/acls/${HOST}`, { chap: null })).statusCode).toBe(200);
    expect((await shown()).chap).toEqual({
      enabled: false,
      username: '',
      mutual: false,
      mutual_username: '',
    });
    const off = await stored();
    expect(off.record?.chap).toBe(undefined);
    expect(off.secret).toBe(undefined);
  });

  it('deregistering removes the secrets with the record', async () => {
    await call('PUT', `/api/targets/acls/${HOST}`, { chap: { username: 'host1', secret: SECRET } });
    expect((await stored()).secret).toBeDefined();
    expect((await call('DELETE', `/api/targets/acls/${HOST}`)).statusCode).toBe(200);
    expect(await stored()).toEqual({ record: undefined, secret: undefined });
    expect(await t.store.listKeys(keys.initiatorSecrets.prefix)).toEqual([]);
  });
});
