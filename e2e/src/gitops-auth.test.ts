import fs from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '@vtl/api';
import { TestGitRepo, sshKeyPair } from '@vtl/controller';
import { waitFor } from '@vtl/reconcile';
import type { Store } from '@vtl/store';
import { testJob } from '@vtl/store/testing';
import { Appliance } from './harness/appliance.js';
import { filesUnder, textsInFiles } from './harness/etcdctl.js';

const TOKEN = 'glpat-e2e-7d1f0c93-never-shown';
const WRONG = 'glpat-e2e-wrong-0000';

const doc = (kind: string, name: string, spec: string, annotations = '') =>
  `apiVersion: vtl.appliance.io/v1alpha1\nkind: ${kind}\nmetadata:\n  name: ${name}\n${annotations}spec:\n${spec
    .trim()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}\n`;

const RECREATE = '  annotations:\n    vtl.appliance.io/recreate-on-immutable-change: "true"\n';

/**
 * Issue 15: Git sources that authenticate, through every process of the appliance (the leader
 * controller's poller fetches, the apiserver applies), against real servers that demand it:
 * Debian's lighttpd with Basic auth in front of git-http-backend, and OpenSSH's sshd. The
 * credentials are gitops secrets named by `credential.secret_ref`. Then the recreate annotation
 * end to end through the Git source, refused while the spec's rules forbid the delete.
 */
describe('GitOps: authenticated Git sources (real lighttpd + git-http-backend, real sshd)', () => {
  let app: Appliance;
  let store: Store;
  let repo: TestGitRepo;
  let httpUrl: string;
  let caCert: string;
  let ssh: { url: string; knownHosts: string };
  let key: { privateKey: string; publicKey: string };
  let otherKey: { privateKey: string; publicKey: string };
  const hooks = new Map<string, string>();
  let poolDir: string;

  const webhook = (name: string) =>
    new Promise<number>((resolve, reject) => {
      const req = https.request(
        `https://127.0.0.1:${app.ports.https}/api/gitops/sources/${name}/webhook`,
        {
          method: 'POST',
          rejectUnauthorized: false,
          headers: { 'content-type': 'application/json', 'x-vtl-webhook-token': hooks.get(name) ?? '' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });

  const status = async (name: string) => (await app.api.get(`/api/gitops/sources/${name}`)).body.status;

  /** Polls now and waits for a poll that ends after `since` (an ISO time), returning the status. */
  async function pollNow(name: string) {
    // Poll times are whole seconds (isoNow): start in a fresh second, so an earlier poll cannot count.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
    const since = Math.floor(Date.now() / 1000) * 1000;
    expect(await webhook(name)).toBe(202);
    let s: any;
    await waitFor(
      async () => {
        s = await status(name);
        return Date.parse(s.last_poll_at) >= since && s.outcome !== 'never';
      },
      { timeoutMs: 240_000, intervalMs: 500 },
    ).catch(() => {
      throw new Error(`no poll of ${name}: ${JSON.stringify(s)}\n${app.logs}`);
    });
    return s;
  }

  const library = async () =>
    ((await app.api.get('/api/libraries')).body as any[]).find((l) => l.name === 'auth-lib');
  const manifests = (drives: number, annotations = '') => ({
    'site/pool.yaml': doc('TapePool', 'authpool', `node: node1\npath: ${poolDir}`),
    'site/library.yaml': doc(
      'VirtualTapeLibrary',
      'auth-lib',
      `product: 3573-TL\ndriveProduct: ULT3580-TD8\nnumDrives: ${drives}\nnumSlots: 10\nnumMap: 2\nlabelPrefix: AUT\npoolRef: authpool\nactivation: manual`,
      annotations,
    ),
  });

  beforeAll(async () => {
    [repo, key, otherKey] = await Promise.all([TestGitRepo.create(), sshKeyPair(), sshKeyPair()]);
    ({ url: httpUrl, caCert } = await repo.serveHttps('deploy', TOKEN));
    ssh = await repo.serveSsh(key.publicKey);
    app = await Appliance.start();
    store = await app.connectStore();
    poolDir = path.join(app.stateDir, 'pools', 'authpool');
  }, 300_000);
  afterAll(async () => {
    await store?.close();
    await app?.destroy();
    await repo?.stop();
  });

  it('HTTPS: a wrong token is a fetch_failed condition saying what to do; the right one applies', async () => {
    await repo.commit(
      {
        ...manifests(1),
        'hosts/host.yaml': doc('TapeInitiator', 'ssh-host', 'wwpn: iqn.2026-01.com.example:ssh-host'),
      },
      'Declare a pool and a library',
    );
    expect(
      (await app.api.put('/api/gitops/secrets/git-https', { data: { username: 'deploy', token: WRONG } }))
        .status,
    ).toBe(200);
    const created = await app.api.post('/api/gitops/sources', {
      name: 'site-https',
      url: httpUrl,
      ca_cert: caCert,
      path: 'site',
      interval_sec: 3600,
      credential: { secret_ref: 'git-https' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    hooks.set('site-https', created.body.webhook_secret);
    let s: any;
    await waitFor(async () => (s = await status('site-https')).outcome !== 'never', {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    expect(s.outcome).toBe('fetch_failed');
    expect(s.message).toMatch(/refused the credential from secret "git-https".*register the right token/);
    expect(await library()).toBeUndefined();

    await app.api.put('/api/gitops/secrets/git-https', { data: { username: 'deploy', token: TOKEN } });
    s = await pollNow('site-https');
    expect(s.outcome, s.message).toBe('applied');
    expect(await library()).toMatchObject({ num_drives: 1, state: 'pending_restart' });
    const pools = (await app.api.get('/api/pools')).body as any[];
    expect(pools.find((p) => p.name === 'authpool')).toMatchObject({ managed_by: { source: 'site-https' } });
  }, 400_000);

  it('SSH: a key the server does not accept fails clearly; the deploy key with pinned known_hosts applies', async () => {
    await app.api.put('/api/gitops/secrets/git-ssh', {
      data: { identity: otherKey.privateKey, known_hosts: ssh.knownHosts },
    });
    const created = await app.api.post('/api/gitops/sources', {
      name: 'site-ssh',
      url: ssh.url,
      path: 'hosts',
      interval_sec: 3600,
      credential: { secret_ref: 'git-ssh' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    hooks.set('site-ssh', created.body.webhook_secret);
    let s: any;
    await waitFor(async () => (s = await status('site-ssh')).outcome !== 'never', {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    expect(s.outcome).toBe('fetch_failed');
    expect(s.message).toMatch(/SSH server refused the key from secret "git-ssh"/);

    await app.api.put('/api/gitops/secrets/git-ssh', {
      data: { identity: key.privateKey, known_hosts: ssh.knownHosts },
    });
    s = await pollNow('site-ssh');
    expect(s.outcome, s.message).toBe('applied');
    const initiators = (await app.api.get('/api/targets')).body.initiators as any[];
    expect(initiators).toContainEqual(
      expect.objectContaining({
        wwpn: 'iqn.2026-01.com.example:ssh-host',
        managed_by: expect.objectContaining({ source: 'site-ssh' }),
      }),
    );
  }, 400_000);

  it('without the annotation an immutable change is refused, naming the field, and nothing changes', async () => {
    const before = await library();
    await repo.commit(manifests(2), 'Two drives');
    const s = await pollNow('site-https');
    expect(s.outcome).toBe('invalid');
    expect(s.errors).toEqual([
      expect.objectContaining({ file: 'site/library.yaml', field: 'spec.numDrives', name: 'auth-lib' }),
    ]);
    expect(s.errors[0].message).toContain('recreate-on-immutable-change');
    expect(await library()).toEqual(before);
  }, 300_000);

  it('with the annotation the library is re-created, but not while a job forbids its delete', async () => {
    const before = await library();
    // A queued export (written as the job machinery would; the controller admits exports from
    // detected only, so it stays queued): the spec forbids deleting a library then.
    await store.put(
      keys.jobs.one(901),
      testJob({ id: 901, kind: 'export', state: 'queued', label: 'AUT001L8', library: before.id }),
    );
    const commit = await repo.commit(manifests(2, RECREATE), 'Two drives, re-created');
    let s = await pollNow('site-https');
    expect(s.outcome).toBe('failed');
    expect(s.last_revision).toBe(commit);
    expect(s.message).toMatch(
      /VirtualTapeLibrary auth-lib: DELETE \/api\/libraries\/\d+ answered 400: Library delete is refused while 1 job\(s\) are active or queued \(export 901\)/,
    );
    const obj = s.objects.find((o: any) => o.kind === 'VirtualTapeLibrary');
    expect(obj.conditions).toContainEqual(
      expect.objectContaining({ type: 'Synced', status: 'False', message: expect.stringMatching(/job/i) }),
    );
    expect(await library()).toEqual(before);

    // Once the job ended, the next sync re-creates it: a new record with the declared drives.
    const job = testJob({
      id: 901,
      kind: 'export',
      state: 'succeeded',
      label: 'AUT001L8',
      library: before.id,
    });
    await store.put(keys.jobs.one(901), job);
    s = await pollNow('site-https');
    expect(s.outcome, s.message).toBe('applied');
    const after = await library();
    expect(after.id).not.toBe(before.id);
    expect(after).toMatchObject({ num_drives: 2, state: 'pending_restart' });
    const events = (await app.api.get('/api/events/search?kind=gitops_change&limit=50')).body as any[];
    expect(events).toContainEqual(
      expect.objectContaining({
        subject: 'VirtualTapeLibrary/auth-lib',
        detail: expect.stringContaining(commit),
      }),
    );
  }, 400_000);

  it('no credential appears in any answer, event, audit entry, log or the support bundle; sealed at rest', async () => {
    await Promise.all(
      [
        '/api/gitops/sources',
        '/api/gitops/secrets',
        '/api/status',
        '/api/events/search?kind=all&limit=500',
        '/api/audit?limit=500',
      ].map((p) => app.api.get(p)),
    );
    const bundle = await app.api.get('/api/system/support-bundle');
    expect(bundle.status).toBe(200);
    const logDir = path.join(app.stateDir, 'logs');
    const logs = await Promise.all(
      (await fs.readdir(logDir)).map((f) => fs.readFile(path.join(logDir, f), 'utf8')),
    );
    const haystacks = {
      responses: app.transcript.map((e) => e.text),
      logs,
      stdout: [app.logs],
      bundle: [gunzipSync(bundle.raw).toString('latin1')],
    };
    expect(haystacks.responses.join('\n')).toContain('site-https');
    expect(logs.join('')).toContain('gitops');
    const keyLines = (k: string) => k.split('\n').filter((l) => l.length > 40 && !l.startsWith('-----'));
    const secrets = [TOKEN, WRONG, ...keyLines(key.privateKey), ...keyLines(otherKey.privateKey)];
    expect(secrets.length).toBeGreaterThan(4);
    for (const secret of secrets)
      for (const [where, texts] of Object.entries(haystacks))
        expect(
          texts.some((t) => t.includes(secret)),
          `a Git credential appeared in ${where}`,
        ).toBe(false);
    // At rest: sealed in every file of etcd's data directory.
    const stored = [TOKEN, ...keyLines(key.privateKey)];
    for (const f of await textsInFiles(await filesUnder(path.join(app.stateDir, 'etcd')), stored))
      for (const secret of stored)
        expect(f.holds(secret), `a Git credential in clear in ${f.file}`).toBe(false);
  }, 120_000);
});
