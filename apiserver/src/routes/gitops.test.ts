import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEntry, EventRecord, RemoteRecord, keys } from '@vtl/api';
import { GITOPS_SERVICE, mintServiceKey } from '@vtl/gitops';
import { startTestApp, type TestApp } from '../test/test-app.js';

const SECRET = 'S3-SECRET-never-shown-0123456789';
const remote = (bucket: string, extra = '') => `apiVersion: vtl.appliance.io/v1alpha1
kind: TapeRemote
metadata: { name: offsite }
spec:
  endpoint: http://127.0.0.1:7480
  bucket: ${bucket}
  accessKey: AKIAEXAMPLE
  secretRef: { name: s3-offsite }
${extra}`;
const settings = `apiVersion: vtl.appliance.io/v1alpha1
kind: ApplianceSettings
metadata: { name: appliance }
spec:
  export: { ieWatcher: true, defaultRemoteRef: offsite }
`;

describe('/api/gitops: plan, apply, secrets, sources (sync engine through the REST routes)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  const docs = (...contents: string[]) => contents.map((content, i) => ({ file: `m${i}.yaml`, content }));

  it('registers a secret write-only: names and keys are shown, never the value', async () => {
    const put = await t.call('PUT', '/api/gitops/secrets/s3-offsite', { data: { secretKey: SECRET } });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ name: 's3-offsite', keys: ['secretKey'] });
    const list = await t.call('GET', '/api/gitops/secrets');
    expect(list.body).not.toContain(SECRET);
  });

  it('plans without changing anything, then applies as gitops:<source>', async () => {
    const plan = await t.call('POST', '/api/gitops/plan', {
      source: 'team',
      documents: docs(remote('b1'), settings),
    });
    expect(plan.statusCode).toBe(200);
    expect(plan.json()).toMatchObject({
      source: 'team',
      valid: true,
      actions: [
        { kind: 'TapeRemote', name: 'offsite', action: 'create' },
        { kind: 'ApplianceSettings', name: 'appliance', action: 'update' },
      ],
    });
    expect((await t.call('GET', '/api/remotes')).json()).toEqual([]);

    const apply = await t.call('POST', '/api/gitops/apply', {
      source: 'team',
      documents: docs(remote('b1'), settings),
      prune: true,
    });
    expect(apply.statusCode, apply.body).toBe(200);
    expect(apply.json()).toMatchObject({ ok: true, applied: [{ ok: true }, { ok: true }] });
    const [made] = (await t.call('GET', '/api/remotes')).json();
    expect(made).toMatchObject({
      name: 'offsite',
      endpoint: '127.0.0.1:7480',
      use_ssl: false,
      has_secret: true,
      managed_by: { source: 'team' },
    });
    const s = (await t.call('GET', '/api/settings')).json();
    expect(s).toMatchObject({ 'export.ie_watcher': 'on', 'export.default_remote': String(made.id) });
    // Audited as the source, through the same routes a person uses.
    const audit = await t.store.list(keys.audit.prefix, AuditEntry);
    expect(audit.items.map((i) => i.value)).toContainEqual(
      expect.objectContaining({
        action: 'remote.create',
        actor: { kind: 'service', name: 'gitops:team' },
        outcome: 'ok',
      }),
    );
    const again = await t.call('POST', '/api/gitops/plan', {
      source: 'team',
      documents: docs(remote('b1'), settings),
    });
    expect(again.json().actions.map((a: { action: string }) => a.action)).toEqual(['unchanged', 'unchanged']);
  });

  it('puts back a REST edit of an owned object and says so in an event', async () => {
    const [made] = (await t.call('GET', '/api/remotes')).json();
    expect((await t.call('PUT', `/api/remotes/${made.id}`, { bucket: 'edited' })).statusCode).toBe(200);
    const apply = await t.call('POST', '/api/gitops/apply', {
      source: 'team',
      documents: docs(remote('b1'), settings),
    });
    expect(apply.json().actions[0]).toMatchObject({ action: 'update', fields: ['bucket'] });
    expect((await t.store.get(keys.remotes.one(made.id), RemoteRecord))?.value.bucket).toBe('b1');
    const events = await t.store.list(keys.events.prefix, EventRecord);
    expect(events.items.map((e) => e.value)).toContainEqual(
      expect.objectContaining({ kind: 'gitops_drift_corrected', subject: 'TapeRemote/offsite' }),
    );
  });

  it('refuses an invalid set with 400, naming file and field, and changes nothing', async () => {
    const before = (await t.call('GET', '/api/remotes')).body;
    const res = await t.call('POST', '/api/gitops/apply', {
      source: 'team',
      documents: [
        { file: 'ok.yaml', content: remote('b2') },
        {
          file: 'bad.yaml',
          content: remote('b2').replace('name: offsite', 'name: other').replace('s3-offsite', 'missing'),
        },
      ],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.errors).toEqual([
      expect.objectContaining({
        file: 'bad.yaml',
        field: 'spec.secretRef.name',
        kind: 'TapeRemote',
        name: 'other',
      }),
    ]);
    expect((await t.call('GET', '/api/remotes')).body).toBe(before);
  });

  it('refuses ApplianceSettings from a second source, naming the source that manages them', async () => {
    const mine = `apiVersion: vtl.appliance.io/v1alpha1
kind: ApplianceSettings
metadata: { name: site-b-settings }
spec:
  evict: { thresholdPct: 70 }
`;
    const before = (await t.call('GET', '/api/settings')).body;
    const other = await t.call('POST', '/api/gitops/apply', { source: 'team-b', documents: docs(mine) });
    expect(other.statusCode).toBe(400);
    expect(other.json().error.details.errors).toEqual([
      expect.objectContaining({
        file: 'm0.yaml',
        kind: 'ApplianceSettings',
        name: 'site-b-settings',
        field: 'metadata.name',
        message: expect.stringContaining('managed by source "team" (object "appliance")'),
      }),
    ]);
    expect((await t.call('GET', '/api/settings')).body).toBe(before);
    // The dry run says the same, per object.
    const plan = await t.call('POST', '/api/gitops/plan', { source: 'team-b', documents: docs(mine) });
    expect(plan.json()).toMatchObject({ valid: false, errors: [{ field: 'metadata.name' }] });
  });

  it('never prunes what was made through the API; prunes what the source owns', async () => {
    const rest = await t.call('POST', '/api/remotes', {
      name: 'by-hand',
      bucket: 'x',
      access_key: 'A',
      secret_key: 'S',
    });
    expect(rest.statusCode).toBe(201);
    const res = await t.call('POST', '/api/gitops/apply', { source: 'team', documents: docs(), prune: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().actions).toEqual([
      expect.objectContaining({ kind: 'TapeRemote', name: 'offsite', action: 'prune' }),
    ]);
    expect((await t.call('GET', '/api/remotes')).json().map((r: { name: string }) => r.name)).toEqual([
      'by-hand',
    ]);
    // Declaring no settings any more, "team" stops managing them: another source may now.
    const taken = await t.call('POST', '/api/gitops/apply', {
      source: 'team-b',
      documents: docs(`apiVersion: vtl.appliance.io/v1alpha1
kind: ApplianceSettings
metadata: { name: site-b-settings }
spec:
  evict: { thresholdPct: 70 }
`),
    });
    expect(taken.statusCode, taken.body).toBe(200);
    expect((await t.call('GET', '/api/settings')).json()).toMatchObject({ 'evict.threshold_pct': '70' });
  });

  it('serializes concurrent applies: two posts of one new object make it once', async () => {
    const body = { source: 'race', documents: docs(remote('b9').replace('name: offsite', 'name: raced')) };
    const answers = await Promise.all([
      t.call('POST', '/api/gitops/apply', body),
      t.call('POST', '/api/gitops/apply', body),
    ]);
    for (const a of answers) expect([200, 409], a.body).toContain(a.statusCode);
    expect(answers.some((a) => a.statusCode === 200)).toBe(true);
    const raced = (await t.call('GET', '/api/remotes'))
      .json()
      .filter((r: { name: string }) => r.name === 'raced');
    expect(raced).toHaveLength(1);
    // Whichever came second saw the first one's remote: unchanged, not a second create.
    const created = answers.filter((a) => a.statusCode === 200 && a.json().actions[0].action === 'create');
    expect(created).toHaveLength(1);
  });

  it('registers an iSCSI initiator with CHAP from secretRef, and a changed secret is an update of chap', async () => {
    const chapSecret = 'chap-secret-0123';
    await t.call('PUT', '/api/gitops/secrets/chap-a', { data: { secret: chapSecret } });
    const initiator = `apiVersion: vtl.appliance.io/v1alpha1
kind: TapeInitiator
metadata: { name: host-a }
spec:
  wwpn: iqn.2026-01.com.example:host-a
  chap: { username: host-a, secretRef: { name: chap-a } }
`;
    const first = await t.call('POST', '/api/gitops/apply', { source: 'hosts', documents: docs(initiator) });
    expect(first.statusCode, first.body).toBe(200);
    const view = (await t.call('GET', '/api/targets')).json();
    expect(view.initiators).toContainEqual(
      expect.objectContaining({
        wwpn: 'iqn.2026-01.com.example:host-a',
        alias: 'host-a',
        chap: expect.objectContaining({ enabled: true, username: 'host-a' }),
        managed_by: expect.objectContaining({ source: 'hosts' }),
      }),
    );
    expect(JSON.stringify(view)).not.toContain(chapSecret);
    await t.call('PUT', '/api/gitops/secrets/chap-a', { data: { secret: 'chap-secret-rotated' } });
    const plan = await t.call('POST', '/api/gitops/plan', { source: 'hosts', documents: docs(initiator) });
    expect(plan.json().actions).toEqual([expect.objectContaining({ action: 'update', fields: ['chap'] })]);
    expect(plan.body).not.toContain('chap-secret-rotated');
  });

  it('keeps a Git source to its poller, and its webhook to its secret', async () => {
    const created = await t.call('POST', '/api/gitops/sources', {
      name: 'repo',
      url: 'git://127.0.0.1/repo.git',
      credential: { https_token: 'tok-secret' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { webhook_secret } = created.json();
    expect(created.body).not.toContain('tok-secret');
    expect(created.json()).toMatchObject({
      name: 'repo',
      branch: 'main',
      credential: 'https_token',
      status: { outcome: 'never' },
    });

    const human = await t.call('POST', '/api/gitops/apply', { source: 'repo', documents: [] });
    expect(human.statusCode).toBe(409);
    const { token, record } = mintServiceKey(GITOPS_SERVICE, 'admin');
    await t.store.put(keys.serviceKeys.one(GITOPS_SERVICE), record);
    const poller = await t.app.inject({
      method: 'POST',
      url: '/api/gitops/apply',
      headers: { authorization: `Bearer ${token}` },
      payload: { source: 'repo', documents: [], revision: 'abc123' },
    });
    expect(poller.statusCode, poller.body).toBe(200);
    expect(poller.json().revision).toBe('abc123');

    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const hook = (sig: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/gitops/sources/repo/webhook',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': sig },
        payload: body,
      });
    expect((await hook('sha256=00')).statusCode).toBe(401);
    const good = await hook(`sha256=${createHmac('sha256', webhook_secret).update(body).digest('hex')}`);
    expect(good.statusCode, good.body).toBe(202);
    expect(
      await t.store.get(keys.gitopsPollRequests.one('repo'), (await import('@vtl/gitops')).PollRequest),
    ).toBeDefined();
  });

  it('takes a Git credential as a registered secret: named, never shown, and not deletable while used', async () => {
    const withPassword = await t.call('POST', '/api/gitops/sources', {
      name: 'leaky',
      url: 'https://ops:tok-in-url@git.example.com/r.git',
    });
    expect(withPassword.statusCode).toBe(400);
    expect(withPassword.json().error.message).toMatch(/no user:password@ in the URL/);
    expect(withPassword.body).not.toContain('tok-in-url');

    const notPem = await t.call('POST', '/api/gitops/sources', {
      name: 'bad-ca',
      url: 'https://git.example.com/r.git',
      ca_cert: 'not a certificate',
    });
    expect(notPem.statusCode).toBe(400);
    expect(notPem.json().error.message).toMatch(/ca_cert: PEM certificates/);

    await t.call('PUT', '/api/gitops/secrets/git-creds', { data: { token: 'tok-from-secret' } });
    const created = await t.call('POST', '/api/gitops/sources', {
      name: 'private',
      url: 'https://git.example.com/ops/appliance.git',
      credential: { secret_ref: 'git-creds' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ credential: 'secret_ref', secret_ref: 'git-creds' });
    expect(created.body).not.toContain('tok-from-secret');

    const del = await t.call('DELETE', '/api/gitops/secrets/git-creds');
    expect(del.statusCode).toBe(409);
    expect(del.json().error.message).toMatch(/credential of Git source\(s\) private/);
    expect((await t.call('GET', '/api/gitops/secrets')).json()).toContainEqual(
      expect.objectContaining({ name: 'git-creds', keys: ['token'] }),
    );

    // Another credential kind drops the reference, and the secret may then go.
    const moved = await t.call('PUT', '/api/gitops/sources/private', {
      credential: { ssh_key: 'KEY', known_hosts: 'git.example.com ssh-ed25519 AAAA' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().credential).toBe('ssh_key');
    expect(moved.json().secret_ref).toBeUndefined();
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const withCa = await t.call('PUT', '/api/gitops/sources/private', { ca_cert: pem });
    expect(withCa.json().ca_cert).toBe(pem);
    const noCa = await t.call('PUT', '/api/gitops/sources/private', { ca_cert: null });
    expect(noCa.statusCode, noCa.body).toBe(200);
    expect(noCa.json().ca_cert).toBeUndefined();
    expect((await t.call('DELETE', '/api/gitops/secrets/git-creds')).statusCode).toBe(200);
  });
});
