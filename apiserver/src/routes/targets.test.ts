import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InitiatorRecord, keys } from '@vtl/api';
import { startTestApp, type TestApp } from '../test/test-app.js';

describe('the initiator registry routes (§4.1)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const call: TestApp['call'] = (method, url, payload) => t.call(method, url, payload);
  const registry = async () =>
    (await t.store.list(keys.initiators.prefix, InitiatorRecord)).items.map((i) => i.value);

  it('stores every WWPN input form in naa. form with the scope rules', async () => {
    const forms: [string, object, { ports: string; libraries: string }][] = [
      ['naa.21000024FF000001', {}, { ports: '', libraries: '' }],
      ['21:00:00:24:ff:00:00:02', { ports: [], libraries: [] }, { ports: '-', libraries: '-' }],
      [
        '21000024ff000003',
        { ports: ['50:01:43:80:12:34:56:78', 'naa.5001438012345679'], libraries: [2, 1] },
        { ports: 'naa.5001438012345678,naa.5001438012345679', libraries: '2,1' },
      ],
    ];
    for (const [wwpn, scope, stored] of forms) {
      const res = await call('POST', '/api/targets/acls', { wwpn, alias: 'host', ...scope });
      expect(res.statusCode, res.body).toBe(200);
      const normal = `naa.${wwpn
        .replace(/^naa\./i, '')
        .replaceAll(':', '')
        .toLowerCase()}`;
      expect(res.json().initiators.find((i: { wwpn: string }) => i.wwpn === normal)).toMatchObject({
        wwpn: normal,
        alias: 'host',
        fabric: 'fc',
        ...stored,
        logged_in: false,
      });
    }
    const view = (await call('GET', '/api/targets')).json();
    expect(view).toMatchObject({ fc: { ports: [], no_hba: true }, luns: [], libraries: [] });
    expect(view.error).toMatch(/nodeagent/);
  });

  it.each([
    [{ wwpn: 'naa.1234' }, /wwpn/],
    [{ wwpn: '21:00:00:24:ff:00:00' }, /wwpn/],
    [{ wwpn: 'zz000024ff000001' }, /wwpn/],
    [{ wwpn: 'iqn.2026-11.test:host', fabric: 'fc' }, /not a WWPN/],
    [{ wwpn: 'naa.21000024ff0000aa', fabric: 'iscsi' }, /not an iSCSI initiator name/],
    [{ wwpn: 'iqn.2026-11.test:host', ports: [] }, /ports/],
    [{ wwpn: 'naa.21000024ff0000aa', ports: ['naa.12'] }, /ports/],
    [{ wwpn: 'naa.21000024ff0000aa', libraries: [0] }, /libraries/],
    [{ wwpn: 'naa.21000024ff0000aa', extra: 1 }, /unknown field/],
    [{}, /wwpn/],
  ])('refuses %j with 400 and registers nothing', async (body, message) => {
    const before = await registry();
    const res = await call('POST', '/api/targets/acls', body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(message);
    expect(await registry()).toEqual(before);
  });

  it('refuses a WWPN already registered, in any spelling, with 400', async () => {
    const res = await call('POST', '/api/targets/acls', { wwpn: '21:00:00:24:FF:00:00:01' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/already registered/);
  });

  it('updates only the fields sent, addressed by any WWPN form; 404 for an unknown one', async () => {
    const res = await call('PUT', '/api/targets/acls/21:00:00:24:ff:00:00:01', { libraries: [] });
    expect(res.statusCode).toBe(200);
    expect(
      res.json().initiators.find((i: { wwpn: string }) => i.wwpn === 'naa.21000024ff000001'),
    ).toMatchObject({ alias: 'host', ports: '', libraries: '-' });
    for (const wwpn of ['naa.21000024ff00ffff', 'not-a-wwpn'])
      expect((await call('PUT', `/api/targets/acls/${wwpn}`, { alias: 'x' })).statusCode).toBe(404);
    expect((await call('PUT', '/api/targets/acls/naa.21000024ff000001', { wwpn: 'x' })).statusCode).toBe(400);
  });

  it('registers an iSCSI initiator by IQN (fabric iscsi), stored lower-case', async () => {
    const res = await call('POST', '/api/targets/acls', {
      wwpn: 'iqn.2026-11.Test.Host:Backup1',
      fabric: 'iscsi',
      libraries: [1],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().initiators.find((i: { fabric: string }) => i.fabric === 'iscsi')).toMatchObject({
      wwpn: 'iqn.2026-11.test.host:backup1',
      ports: '',
      libraries: '1',
    });
    expect(
      (await call('PUT', '/api/targets/acls/iqn.2026-11.test.host:backup1', { ports: [] })).statusCode,
    ).toBe(400);
  });

  it('deregisters; 404 for an unknown initiator; a bad force value is 400', async () => {
    expect((await call('DELETE', '/api/targets/acls/naa.21000024ff00ffff')).statusCode).toBe(404);
    expect((await call('DELETE', '/api/targets/acls/naa.21000024ff000002?force=yes')).statusCode).toBe(400);
    const res = await call('DELETE', '/api/targets/acls/21000024ff000002');
    expect(res.statusCode).toBe(200);
    expect(res.json().initiators.map((i: { wwpn: string }) => i.wwpn)).not.toContain('naa.21000024ff000002');
    expect((await call('DELETE', '/api/targets/acls/21000024ff000002')).statusCode).toBe(404);
  });

  it('PUT /api/targets/ports takes naa. form only and persists fc.disabled_ports', async () => {
    for (const body of [
      { wwn: '21:00:00:24:ff:00:00:01', serving: false },
      { wwn: '21000024ff000001', serving: false },
      { wwn: 'naa.21000024ff000001' },
      { wwn: 'naa.21000024ff000001', serving: 'no' },
    ])
      expect((await call('PUT', '/api/targets/ports', body)).statusCode, JSON.stringify(body)).toBe(400);
    expect(
      (await call('PUT', '/api/targets/ports', { wwn: 'naa.21000024ff000001', serving: false })).statusCode,
    ).toBe(200);
    await call('PUT', '/api/targets/ports', { wwn: 'naa.21000024ff000002', serving: false });
    const settings = (await call('GET', '/api/settings')).json();
    expect(settings['fc.disabled_ports']).toBe('naa.21000024ff000001,naa.21000024ff000002');
    await call('PUT', '/api/targets/ports', { wwn: 'naa.21000024ff000001', serving: true });
    expect((await call('GET', '/api/settings')).json()['fc.disabled_ports']).toBe('naa.21000024ff000002');
  });

  it('reads are read-only, writes admin (OpenAPI roles)', async () => {
    const doc = (await call('GET', '/api/openapi.json')).json();
    expect(doc.paths['/api/targets'].get['x-vtl-role']).toBe('read-only');
    expect(doc.paths['/api/targets/acls'].post['x-vtl-role']).toBe('admin');
    expect(doc.paths['/api/targets/acls/{wwpn}'].put['x-vtl-role']).toBe('admin');
    expect(doc.paths['/api/targets/acls/{wwpn}'].delete['x-vtl-role']).toBe('admin');
    expect(doc.paths['/api/targets/ports'].put['x-vtl-role']).toBe('admin');
  });
});
