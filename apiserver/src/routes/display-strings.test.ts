import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolSpec, PoolStatus, isoNow, keys } from '@vtl/api';
import { startTestApp, type TestApp } from '../test/test-app.js';

/**
 * Issue 34 item 10: one rule for every display string and identifier, through the real API on a
 * real etcd. White space at either end is refused (400, the field named, nothing changed), never
 * trimmed; white space inside is kept as sent (docs/api.md "Request bodies and input hygiene").
 */
let t: TestApp;
const WWPN = 'naa.2100001b32a1b2c3';
let remoteId = 0;

beforeAll(async () => {
  t = await startTestApp();
  // An active pool with no library, so a library declare can succeed.
  await t.store.put(
    keys.pools.one(1),
    PoolSpec.parse({ id: 1, name: 'p1', node: 'n1', path: '/p1', created_at: isoNow() }),
  );
  await t.store.put(
    keys.poolStatus.one(1),
    PoolStatus.parse({ id: 1, node: 'n1', state: 'active', detail: '' }),
  );
  const remote = await t.call('POST', '/api/remotes', {
    name: 'r',
    bucket: 'b',
    access_key: 'a',
    secret_key: 's',
  });
  expect(remote.statusCode, remote.body).toBe(201);
  remoteId = remote.json().id;
  const acl = await t.call('POST', '/api/targets/acls', { wwpn: WWPN, alias: 'host' });
  expect(acl.statusCode, acl.body).toBe(200);
}, 60_000);
afterAll(() => t?.close());

type Method = 'POST' | 'PUT';
interface Row {
  /** The resource and field, as the error message names it. */
  what: string;
  field: string;
  method: Method;
  url: () => string;
  body: (value: string) => object;
  /** The listing a refused request must leave unchanged. */
  list: string;
  /** Where the stored value shows after an accepted request; absent when the row only refuses. */
  shown?: (list: unknown) => unknown;
}

const remoteBody = (over: object) => ({ name: 'r2', bucket: 'b', access_key: 'a', secret_key: 's', ...over });
const libraryBody = (name: string) => ({
  name,
  product: '3573-TL',
  drive_product: 'ULT3580-TD8',
  num_drives: 1,
  label_prefix: 'DSP',
  pool_id: 1,
});
const byId = (list: unknown, id: number) => (list as { id: number; name: string }[]).find((r) => r.id === id);
const newest = (list: unknown) => (list as object[]).at(-1);

const rows: Row[] = [
  {
    what: 'API key name',
    field: 'name',
    method: 'POST',
    url: () => '/api/apikeys',
    body: (name) => ({ name }),
    list: '/api/apikeys',
    shown: (l) => (newest(l) as { name: string }).name,
  },
  ...(['name', 'region', 'bucket', 'prefix', 'access_key'] as const).map((field): Row => ({
    what: `remote ${field} (create)`,
    field,
    method: 'POST',
    url: () => '/api/remotes',
    body: (v) => remoteBody({ [field]: v }),
    list: '/api/remotes',
    ...(field === 'name' ? { shown: (l: unknown) => (newest(l) as { name: string }).name } : {}),
  })),
  {
    what: 'remote endpoint',
    field: 'endpoint',
    method: 'POST',
    url: () => '/api/remotes',
    body: (endpoint) => remoteBody({ endpoint }),
    list: '/api/remotes',
  },
  {
    what: 'remote name (update)',
    field: 'name',
    method: 'PUT',
    url: () => `/api/remotes/${remoteId}`,
    body: (name) => ({ name }),
    list: '/api/remotes',
    shown: (l) => byId(l, remoteId)?.name,
  },
  {
    what: 'initiator alias (create)',
    field: 'alias',
    method: 'POST',
    url: () => '/api/targets/acls',
    body: (alias) => ({ wwpn: 'naa.2100001b32a1b2c4', alias }),
    list: '/api/targets',
  },
  {
    what: 'initiator alias (update)',
    field: 'alias',
    method: 'PUT',
    url: () => `/api/targets/acls/${WWPN}`,
    body: (alias) => ({ alias }),
    list: '/api/targets',
    shown: (v) =>
      (v as { initiators: { wwpn: string; alias: string }[] }).initiators.find((i) => i.wwpn === WWPN)?.alias,
  },
  {
    what: 'library name',
    field: 'name',
    method: 'POST',
    url: () => '/api/libraries',
    body: libraryBody,
    list: '/api/libraries',
  },
  ...(['name', 'system_name', 'library_serial'] as const).map((field): Row => ({
    what: `recover ${field}`,
    field,
    method: 'POST',
    url: () => '/api/libraries/recover',
    body: (v) => ({
      remote_id: remoteId,
      system_name: 'other',
      library_serial: 'VL000001',
      pool_id: 1,
      [field]: v,
    }),
    list: '/api/libraries',
  })),
  {
    what: 'pool node',
    field: 'node',
    method: 'POST',
    url: () => '/api/pools',
    body: (node) => ({ name: 'p2', node, path: '/srv/p2' }),
    list: '/api/pools',
  },
  {
    what: 'user username',
    field: 'username',
    method: 'POST',
    url: () => '/api/users',
    body: (username) => ({ username, password: 'a long enough password', role: 'read-only' }),
    list: '/api/users',
  },
];

/** White space at the start or end, in the forms a paste or a keyboard brings. */
const EDGES = [' lead', 'trail ', '\u00a0nbsp', 'ideographic\u3000', '\ufeffbom', ' '];

describe('display strings and identifiers: white space at the ends refused, never trimmed (issue 34, item 10)', () => {
  it.each(rows)('$what', async (row) => {
    for (const value of EDGES) {
      const before = (await t.call('GET', row.list)).body;
      const res = await t.call(row.method, row.url(), row.body(value));
      expect(res.statusCode, `${JSON.stringify(value)}: ${res.body}`).toBe(400);
      expect(res.json().error.code).toBe('validation_failed');
      expect(res.json().error.message).toContain(row.field);
      expect((await t.call('GET', row.list)).body, 'a refused request changes nothing').toBe(before);
    }
  });

  it.each(rows.filter((r) => r.shown))('$what: white space inside is kept as sent', async (row) => {
    const value = `Kept  as\u00a0sent ${row.what.length}`;
    const res = await t.call(row.method, row.url(), row.body(value));
    expect(res.statusCode, res.body).toBeLessThan(300);
    expect(row.shown!((await t.call('GET', row.list)).json())).toBe(value);
  });

  it('library name: kept as sent (the name rule allows letters, digits, space, _ . -)', async () => {
    const res = await t.call('POST', '/api/libraries', libraryBody('Tape  library 2'));
    expect(res.statusCode, res.body).toBe(201);
    const rows = (await t.call('GET', '/api/libraries')).json() as { name: string }[];
    expect(rows.map((l) => l.name)).toEqual(['Tape  library 2']);
  });
});
