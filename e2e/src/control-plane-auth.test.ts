import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Appliance } from './harness/appliance.js';
import { filesUnder, textsInFiles } from './harness/etcdctl.js';
import type { ApiClient } from './harness/api-client.js';

/** Endpoints of the spec this appliance serves, with the role §4 labels (or docs/api.md gives). */
const EXPECTED: Array<[string, string, string]> = [
  ['get', '/healthz', 'public'],
  ['get', '/metrics', 'public'],
  ['get', '/api/status', 'read-only'],
  ['get', '/api/library', 'read-only'],
  ['get', '/api/system', 'read-only'],
  ['post', '/api/system/dataplane-restart', 'admin'],
  ['post', '/api/system/restart', 'admin'],
  ['post', '/api/system/reboot', 'admin'],
  ['get', '/api/system/update-status', 'read-only'],
  ['post', '/api/system/update', 'admin'],
  ['post', '/api/system/rollback', 'admin'],
  ['get', '/api/system/support-bundle', 'admin'],
  ['get', '/api/license', 'read-only'],
  ['post', '/api/license/ack', 'admin'],
  ['get', '/api/settings', 'read-only'],
  ['put', '/api/settings', 'admin'],
  ['get', '/api/models', 'read-only'],
  ['get', '/api/cartridges', 'read-only'],
  ['get', '/api/cartridges/{label}', 'read-only'],
  ['post', '/api/cartridges', 'admin'],
  ['delete', '/api/cartridges/{label}', 'admin'],
  ['get', '/api/libraries', 'read-only'],
  ['get', '/api/libraries/{lib}/next-label', 'read-only'],
  ['post', '/api/libraries', 'admin'],
  ['post', '/api/libraries/apply', 'admin'],
  ['delete', '/api/libraries/{lib}', 'admin'],
  ['post', '/api/libraries/{lib}/drives/{index}/load', 'admin'],
  ['post', '/api/libraries/{lib}/drives/{index}/unload', 'admin'],
  ['get', '/api/events/recent', 'read-only'],
  ['get', '/api/events/search', 'read-only'],
  ['get', '/api/events', 'read-only'],
  ['post', '/api/auth/login', 'public'],
  ['post', '/api/auth/logout', 'read-only'],
  ['get', '/api/users', 'admin'],
  ['post', '/api/users', 'admin'],
  ['put', '/api/users/{name}/password', 'read-only'],
  ['delete', '/api/users/{name}', 'admin'],
  ['get', '/api/apikeys', 'admin'],
  ['post', '/api/apikeys', 'admin'],
  ['delete', '/api/apikeys/{id}', 'admin'],
  ['get', '/api/audit', 'admin'],
  ['get', '/api/remotes', 'read-only'],
  ['post', '/api/remotes', 'admin'],
  ['put', '/api/remotes/{id}', 'admin'],
  ['delete', '/api/remotes/{id}', 'admin'],
  ['post', '/api/remotes/{id}/test', 'admin'],
  ['get', '/api/remotes/{id}/objects', 'read-only'],
  ['delete', '/api/remotes/{id}/objects', 'admin'],
  ['get', '/api/catalog', 'read-only'],
  ['post', '/api/catalog/rebuild', 'admin'],
  ['post', '/api/cartridges/{label}/export', 'admin'],
  ['post', '/api/cartridges/{label}/evict', 'admin'],
  ['post', '/api/cartridges/{label}/import', 'admin'],
  ['get', '/api/jobs', 'read-only'],
  ['get', '/api/jobs/{id}', 'read-only'],
  ['post', '/api/jobs/{id}/retry', 'admin'],
  ['post', '/api/jobs/{id}/cancel', 'admin'],
  ['post', '/api/libraries/recover', 'admin'],
  ['get', '/api/targets', 'read-only'],
  ['post', '/api/targets/acls', 'admin'],
  ['put', '/api/targets/acls/{wwpn}', 'admin'],
  ['delete', '/api/targets/acls/{wwpn}', 'admin'],
  ['put', '/api/targets/ports', 'admin'],
  // docs/gitops.md: a dry run changes nothing, so a read-only key (CI's `vtl diff`) may call it.
  ['post', '/api/gitops/plan', 'read-only'],
  ['post', '/api/gitops/apply', 'admin'],
];

/** POSTs that only read (docs/gitops.md): answered to read-only principals like a GET. */
const READING_POSTS = new Set(['/api/gitops/plan']);

const fill = (p: string) =>
  p
    .replace('{lib}', '1')
    .replace('{index}', '0')
    .replace('{label}', 'ABC001L8')
    .replace('{id}', '1')
    .replace('{name}', 'admin');

describe('who may call what: sessions, API keys, roles and the audit log', () => {
  let app: Appliance;
  let routes: Array<{ method: string; path: string; role: string }>;
  /** Every secret handed out or typed in during the run; none may show up anywhere else. */
  const secrets: string[] = [];
  let readOnly: ApiClient;
  let readOnlyKeyId: number;

  beforeAll(async () => {
    app = await Appliance.start();
    secrets.push(app.adminPassword as string, app.api.token);
    const doc = (await app.api.get('/api/openapi.json')).body;
    routes = Object.entries<Record<string, any>>(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method, path: p, role: op['x-vtl-role'] })),
    );
  });
  afterAll(async () => {
    await app?.destroy();
  });

  it('serves every endpoint with the role the spec labels', () => {
    for (const [method, p, role] of EXPECTED)
      expect(routes.find((r) => r.method === method && r.path === p)?.role, `${method} ${p}`).toBe(role);
  });

  it('refuses every non-public route without credentials, with 401 and the error body', async () => {
    const checked = routes.filter((r) => r.role !== 'public');
    expect(checked.length).toBeGreaterThan(30);
    for (const r of checked) {
      for (const client of [app.anonymous, app.anonymous.withToken('vtls_forged')]) {
        const res = await client.probe(
          r.method.toUpperCase(),
          fill(r.path),
          r.method === 'get' ? undefined : {},
        );
        expect(res.status, `${r.method} ${r.path}`).toBe(401);
        expect(JSON.parse(res.text).error.code).toBe('unauthorized');
      }
    }
  });

  it('with a read-only API key: reads answer, writes and admin-only reads are 403 and change nothing', async () => {
    expect((await app.api.put('/api/settings', { 'apikeys.enabled': '1' })).status).toBe(200);
    const created = await app.api.post('/api/apikeys', { name: 'monitoring', role: 'read-only' });
    expect(created.status).toBe(201);
    secrets.push(created.body.key);
    readOnlyKeyId = created.body.id;
    readOnly = app.anonymous.withToken(created.body.key);
    const before = await snapshot(app.api);
    for (const r of routes.filter((x) => x.role !== 'public')) {
      const res = await readOnly.probe(
        r.method.toUpperCase(),
        fill(r.path),
        r.method === 'get' ? undefined : {},
      );
      // A key is no user: it cannot log out (400) or change a password (403) either.
      if ((r.method === 'get' || READING_POSTS.has(r.path)) && r.role !== 'admin')
        expect([401, 403], `${r.method} ${r.path}`).not.toContain(res.status);
      else {
        expect(res.status, `${r.method} ${r.path}: ${res.text}`).toBe(
          r.path === '/api/auth/logout' ? 400 : 403,
        );
        if (res.status === 403) expect(JSON.parse(res.text).error).toMatchObject({ code: 'forbidden' });
      }
    }
    expect(await snapshot(app.api)).toEqual(before);
  });

  it('treats an API key as no credential while apikeys.enabled is not 1', async () => {
    expect((await app.api.put('/api/settings', { 'apikeys.enabled': '0' })).status).toBe(200);
    const res = await readOnly.get('/api/status');
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/apikeys\.enabled/);
    expect((await app.api.put('/api/settings', { 'apikeys.enabled': '1' })).status).toBe(200);
    expect((await readOnly.get('/api/status')).status).toBe(200);
  });

  it('validates settings: an unknown key or a bad value is 400 and nothing is written', async () => {
    const before = (await app.api.get('/api/settings')).body;
    for (const body of [
      { 'system.name': 'ok-name', 'bogus.key': '1' },
      { 'system.name': 'Not Valid' },
      { 'evict.threshold_pct': '150' },
      { 'fc.disabled_ports': 'naa.xyz' },
    ]) {
      const res = await app.api.put('/api/settings', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message).toMatch(/nothing was written/i);
    }
    expect((await app.api.get('/api/settings')).body).toEqual(before);
  });

  it('records who asked for what, pageable, after a sequence of actions', async () => {
    const start = (await app.api.get('/api/audit?limit=1')).body.entries[0].id;
    const userPassword = 'tape-operator-pass-1';
    secrets.push(userPassword, 'tape-operator-pass-2');
    expect((await app.api.post('/api/users', { username: 'oper', password: userPassword })).status).toBe(201);
    const oper = await app.loginAs('oper', userPassword);
    secrets.push(oper.token);
    expect((await oper.put('/api/settings', { 'system.name': 'nope' })).status).toBe(403);
    expect(
      (
        await oper.put('/api/users/oper/password', {
          password: 'tape-operator-pass-2',
          current_password: userPassword,
        })
      ).status,
    ).toBe(200);
    expect((await app.api.put('/api/settings', { 'system.name': 'site-b' })).status).toBe(200);
    expect((await app.api.delete('/api/users/admin')).status).toBe(400);
    expect((await readOnly.post('/api/license/ack')).status).toBe(403);
    expect((await app.api.delete(`/api/apikeys/${readOnlyKeyId}`)).status).toBe(200);
    expect((await oper.post('/api/auth/logout')).status).toBe(200);
    expect((await oper.get('/api/status')).status).toBe(401);
    expect(
      (await app.anonymous.post('/api/auth/login', { username: 'oper', password: 'wrong' })).status,
    ).toBe(401);

    // Page through newest first, two at a time, back to where the sequence began.
    const seen: any[] = [];
    let before: number | null = null;
    do {
      const q: string = before === null ? '' : `&before=${before}`;
      const page: any = (await app.api.get(`/api/audit?limit=2${q}`)).body;
      seen.push(...page.entries);
      before = page.next_before;
    } while (before !== null && seen.at(-1).id > start);
    const entries = seen.filter((e) => e.id > start).reverse();
    expect(
      entries.map((e) => [e.actor.kind, e.actor.name, e.action, e.subject, e.outcome, e.status]),
    ).toEqual([
      ['user', 'admin', 'user.create', 'oper', 'ok', 201],
      ['anonymous', '', 'auth.login', 'oper', 'ok', 200],
      ['user', 'oper', 'settings.update', '', 'refused', 403],
      ['user', 'oper', 'user.password', 'oper', 'ok', 200],
      ['user', 'admin', 'settings.update', 'system.name', 'ok', 200],
      ['user', 'admin', 'user.delete', 'admin', 'refused', 400],
      ['apikey', `${readOnlyKeyId}:monitoring`, 'license.ack', '', 'refused', 403],
      ['user', 'admin', 'apikey.revoke', String(readOnlyKeyId), 'ok', 200],
      ['user', 'oper', 'auth.logout', 'oper', 'ok', 200],
      ['anonymous', '', 'auth.login', 'oper', 'refused', 401],
    ]);
    for (const e of entries) expect(Date.parse(e.ts)).toBeGreaterThan(0);
  });

  it('never shows a secret in a response, a log line, an event, a metric or the support bundle', async () => {
    // An S3 secret key is write-only: typed in on create and update, never shown again.
    const s3Secret = 'S3secretKEY-never-shown-0123456789abcdef';
    const s3Secret2 = 'S3secretKEY-replaced-0123456789abcdef';
    secrets.push(s3Secret, s3Secret2);
    const remote = await app.api.post('/api/remotes', {
      name: 'secret-check',
      bucket: 'b',
      access_key: 'AKIASECRETCHECK',
      secret_key: s3Secret,
      endpoint: '127.0.0.1:1',
      use_ssl: false,
    });
    expect(remote.status).toBe(201);
    expect((await app.api.put(`/api/remotes/${remote.body.id}`, { secret_key: s3Secret2 })).status).toBe(200);
    expect((await app.api.post(`/api/remotes/${remote.body.id}/test`, {})).body.ok).toBe(false);
    // iSCSI CHAP secrets are write-only too (the login side: e2e/src/iscsi-chap.test.ts).
    const chapSecret = 'CHAPsecret-never-shown-1';
    const chapMutual = 'CHAPmutual-never-shown-2';
    secrets.push(chapSecret, chapMutual);
    const chap = { username: 'host', secret: chapSecret, mutual_username: 'vtl', mutual_secret: chapMutual };
    const iqn = 'iqn.2026-11.test.secret:host';
    expect((await app.api.post('/api/targets/acls', { wwpn: iqn, fabric: 'iscsi', chap })).status).toBe(200);
    expect(
      (await app.api.put(`/api/targets/acls/${iqn}`, { chap: { ...chap, username: 'host2' } })).status,
    ).toBe(200);
    await app.api.get('/api/targets');
    await app.api.get('/api/remotes');
    await app.api.get('/api/events/search?limit=5000');
    await app.api.get('/api/audit');
    const bundle = await app.api.get('/api/system/support-bundle');
    expect(bundle.status).toBe(200);
    const bundleText = gunzipSync(bundle.raw).toString('latin1');
    // The appliance's own keys never leave their files: the sealing key, the etcd CA and client keys.
    const pki = path.join(app.stateDir, 'pki');
    for (const name of await fs.readdir(pki)) {
      if (!name.endsWith('.key')) continue;
      const text = await fs.readFile(path.join(pki, name), 'utf8');
      if (name === 'sealing.key')
        secrets.push(
          ...text
            .split('\n')
            .filter((l) => /^k\w+ /.test(l))
            .map((l) => l.split(' ')[1]!),
        );
      else secrets.push(...text.split('\n').filter((l) => /^[A-Za-z0-9+/=]{40,}$/.test(l)));
    }
    // Every secret so far was typed in, handed out or kept in a key file: none may be in the store's files.
    const typedIn = [...secrets];
    // The stored hashes are secrets too: read them where they live.
    const store = await app.connectStore();
    try {
      const users = await store.list('/vtl/auth/users/', z.any());
      for (const u of users.items) secrets.push(u.value.password_hash);
      for (const key of await store.listKeys('/vtl/auth/sessions/'))
        secrets.push(key.split('/').pop() as string);
    } finally {
      await store.close();
    }
    for (const s of [...secrets])
      if (s.startsWith('vtlk_')) secrets.push(createHash('sha256').update(s).digest('hex'));
    const metrics = [(await app.anonymous.get('/metrics')).text, (await app.plain.get('/metrics')).text];
    const handedOut = (e: { method: string; path: string }) =>
      e.method === 'POST' && (e.path === '/api/auth/login' || e.path === '/api/apikeys');
    const responses = app.transcript.filter((e) => !handedOut(e)).map((e) => e.text);
    const logDir = path.join(app.stateDir, 'logs');
    const logs = await Promise.all(
      (await fs.readdir(logDir)).map((f) => fs.readFile(path.join(logDir, f), 'utf8')),
    );
    const haystacks = { responses, metrics, logs, stdout: [app.logs], bundle: [bundleText] };
    expect(secrets.length).toBeGreaterThan(8);
    expect(logs.join('')).toMatch(/apiserver listening/);
    for (const secret of secrets)
      for (const [where, texts] of Object.entries(haystacks))
        expect(
          texts.some((t) => t.includes(secret)),
          `a secret appeared in ${where}`,
        ).toBe(false);
    // At rest: not in any file of etcd's data directory (WAL, snapshots, bolt db with old revisions).
    const etcdFiles = await textsInFiles(await filesUnder(path.join(app.stateDir, 'etcd')), [
      'AKIASECRETCHECK',
      ...typedIn,
    ]);
    // The search sees the store's contents: the remote's access key (not a secret) is in clear.
    expect(etcdFiles.some((f) => f.holds('AKIASECRETCHECK'))).toBe(true);
    for (const secret of typedIn)
      for (const f of etcdFiles)
        expect(f.holds(secret), `a secret appeared in clear in ${f.file}`).toBe(false);
  });
});

/** What a refused write must leave unchanged. */
async function snapshot(api: ApiClient) {
  const [settings, users, keys, libraries, pools, cartridges] = await Promise.all(
    ['/api/settings', '/api/users', '/api/apikeys', '/api/libraries', '/api/pools', '/api/cartridges'].map(
      (p) => api.get(p).then((r) => r.body),
    ),
  );
  // A pool's figures are the nodeagent's periodic measurement of its filesystem, which anything
  // on the machine changes (logs, etcd's WAL): observations, not state a request could change.
  const specs = (pools as Array<Record<string, unknown>>).map(({ figures: _live, ...spec }) => spec);
  return { settings, users, keys, libraries, pools: specs, cartridges };
}
