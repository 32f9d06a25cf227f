import https from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { waitFor } from '@vtl/reconcile';
import { TestGitRepo } from '@vtl/controller';
import { Appliance } from './harness/appliance.js';

const doc = (kind: string, name: string, spec: string) =>
  `apiVersion: vtl.appliance.io/v1alpha1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${spec
    .trim()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}\n`;

/**
 * Issue 15: the appliance declared in a Git repository and converged by the sync engine, through
 * every real process (apiserver, leader controller with its Git poller, nodeagent, emulator), a
 * real `git daemon` and a real S3 RGW for the remote's secret.
 */
describe('GitOps: a Git repository converges the appliance (real git daemon, real RGW)', () => {
  let app: Appliance;
  let rgw: TestRgw;
  let git: TestGitRepo;
  let gitUrl: string;
  let webhookSecret: string;
  let poolDir: string;
  const files: Record<string, string> = {};

  const manifests = (over: { alias?: string; drives?: number; withHostB?: boolean } = {}) => ({
    'appliance/pool.yaml': doc('TapePool', 'gitpool', `node: node1\npath: ${poolDir}`),
    'appliance/library.yaml': doc(
      'VirtualTapeLibrary',
      'vtl-git',
      `product: 3573-TL\ndriveProduct: ULT3580-TD8\nnumDrives: ${over.drives ?? 2}\nnumSlots: 10\nnumMap: 2\nlabelPrefix: GIT\npoolRef: gitpool\nactivation: auto`,
    ),
    'appliance/initiators.yaml':
      doc(
        'TapeInitiator',
        'host-a',
        `wwpn: iqn.2026-01.com.example:host-a\nalias: ${over.alias ?? 'backup host A'}\nlibraryRefs: [vtl-git]`,
      ) +
      (over.withHostB === false
        ? ''
        : `---\n${doc('TapeInitiator', 'host-b', 'wwpn: "21:00:00:24:ff:00:00:0b"')}`),
    'appliance/remote.yaml': doc(
      'TapeRemote',
      'offsite',
      `endpoint: http://${rgw.endpoint}\nbucket: ${rgw.bucket}\nregion: ${rgw.region}\npathStyle: true\naccessKey: ${rgw.access_key}\nsecretRef: { name: s3-offsite }`,
    ),
    'README.md': 'Not a manifest: outside the source path.\n',
  });

  const webhook = (name: string, token: string) =>
    new Promise<number>((resolve, reject) => {
      const req = https.request(
        `https://127.0.0.1:${app.ports.https}/api/gitops/sources/${name}/webhook`,
        {
          method: 'POST',
          rejectUnauthorized: false,
          headers: { 'content-type': 'application/json', 'x-vtl-webhook-token': token },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });

  /** Pushes a commit, calls the webhook, and waits until the source has looked at that commit. */
  async function sync(change: Record<string, string | null>, message: string) {
    Object.assign(files, change);
    const commit = await git.commit(change, message);
    expect(await webhook('site', webhookSecret)).toBe(202);
    let status: any;
    await waitFor(
      async () => {
        status = (await app.api.get('/api/gitops/sources/site')).body.status;
        return status.last_revision === commit && status.outcome !== 'never';
      },
      { timeoutMs: 240_000, intervalMs: 500 },
    );
    return { commit, status };
  }

  const library = async () =>
    ((await app.api.get('/api/libraries')).body as any[]).find((l) => l.name === 'vtl-git');
  const initiators = async () => (await app.api.get('/api/targets')).body.initiators as any[];

  beforeAll(async () => {
    [rgw, git] = await Promise.all([startTestRgw(), TestGitRepo.create()]);
    gitUrl = await git.serveGitDaemon();
    app = await Appliance.start();
    poolDir = path.join(app.stateDir, 'pools', 'gitpool');
    const secret = await app.api.put('/api/gitops/secrets/s3-offsite', {
      data: { secretKey: rgw.secret_key },
    });
    expect(secret.status, JSON.stringify(secret.body)).toBe(200);
  }, 300_000);
  afterAll(async () => {
    await app?.destroy();
    await git?.stop();
    await rgw?.stop();
  });

  it('converges the appliance: pool, library activated (activation: auto), initiators, a remote whose secret works', async () => {
    const byHand = await app.api.post('/api/remotes', {
      name: 'by-hand',
      bucket: 'other',
      access_key: 'A',
      secret_key: 'S',
    });
    expect(byHand.status).toBe(201);
    const first = await git.commit(manifests(), 'Declare the appliance');
    Object.assign(files, manifests());
    const created = await app.api.post('/api/gitops/sources', {
      name: 'site',
      url: gitUrl,
      branch: 'main',
      path: 'appliance',
      interval_sec: 3600,
      prune: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    webhookSecret = created.body.webhook_secret;
    // The first poll happens as soon as the leader sees the source.
    await waitFor(
      async () => (await app.api.get('/api/gitops/sources/site')).body.status.applied_revision === first,
      {
        timeoutMs: 240_000,
        intervalMs: 500,
      },
    ).catch(async () => {
      throw new Error(
        `not applied: ${JSON.stringify((await app.api.get('/api/gitops/sources/site')).body.status)}`,
      );
    });
    const pools = (await app.api.get('/api/pools')).body as any[];
    expect(pools.find((p) => p.name === 'gitpool')).toMatchObject({
      path: poolDir,
      state: 'active',
      managed_by: { source: 'site', revision: first },
    });
    await waitFor(async () => (await library())?.state === 'active', { timeoutMs: 120_000, intervalMs: 500 });
    expect(await library()).toMatchObject({ product: '3573-TL', num_drives: 2, label_prefix: 'GIT' });
    const lib = await library();
    expect(await initiators()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          wwpn: 'iqn.2026-01.com.example:host-a',
          alias: 'backup host A',
          libraries: String(lib.id),
        }),
        expect.objectContaining({ wwpn: 'naa.21000024ff00000b', alias: 'host-b', fabric: 'fc' }),
      ]),
    );
    const remote = ((await app.api.get('/api/remotes')).body as any[]).find((r) => r.name === 'offsite');
    expect(remote).toMatchObject({
      endpoint: rgw.endpoint,
      use_ssl: false,
      path_style: true,
      has_secret: true,
    });
    // The secret from secretRef reached the remote: the bucket answers to it.
    const probe = await app.api.post(`/api/remotes/${remote.id}/test`);
    expect(probe.body, JSON.stringify(probe.body)).toMatchObject({ ok: true });
    // The status view names the source's applied commit.
    expect((await app.api.get('/api/status')).body.gitops).toContainEqual(
      expect.objectContaining({ source: 'site', applied_revision: first, outcome: 'applied' }),
    );
    // Audited as the source.
    const audit = (await app.api.get('/api/audit?limit=200')).body;
    expect(JSON.stringify(audit)).toContain('gitops:site');
  }, 400_000);

  it('a commit editing a mutable field updates it', async () => {
    const { status } = await sync(manifests({ alias: 'backup host A (rack 4)' }), 'Rename host A');
    expect(status.outcome, status.message).toBe('applied');
    expect((await initiators()).find((i) => i.wwpn.startsWith('iqn.'))?.alias).toBe('backup host A (rack 4)');
  }, 300_000);

  it('an immutable change leaves everything as it was and names the field and what to do', async () => {
    const before = await library();
    const { status } = await sync(manifests({ alias: 'not applied', drives: 3 }), 'Grow the library');
    expect(status.outcome).toBe('invalid');
    expect(status.errors).toEqual([
      expect.objectContaining({
        file: 'appliance/library.yaml',
        kind: 'VirtualTapeLibrary',
        name: 'vtl-git',
        field: 'spec.numDrives',
      }),
    ]);
    expect(status.errors[0].message).toContain('recreate-on-immutable-change');
    // The object's own condition says which field and what to do, Kubernetes style.
    const obj = status.objects.find((o: any) => o.kind === 'VirtualTapeLibrary' && o.name === 'vtl-git');
    expect(obj).toMatchObject({ action: 'refused' });
    expect(obj.conditions).toContainEqual(
      expect.objectContaining({
        type: 'Synced',
        status: 'False',
        reason: 'ImmutableFieldChanged',
        message: expect.stringContaining('spec.numDrives'),
      }),
    );
    expect(await library()).toEqual(before);
    expect((await initiators()).find((i) => i.wwpn.startsWith('iqn.'))?.alias).toBe('backup host A (rack 4)');
    const plan = await app.api.post('/api/gitops/plan', {
      source: 'site',
      documents: Object.entries(manifests({ drives: 3 })).map(([file, content]) => ({ file, content })),
    });
    expect(plan.body.actions).toContainEqual(
      expect.objectContaining({ kind: 'VirtualTapeLibrary', action: 'refused', fields: ['numDrives'] }),
    );
  }, 300_000);

  it('a broken revision changes nothing and names the file', async () => {
    const { status } = await sync(
      { ...manifests({ alias: 'still not applied' }), 'appliance/broken.yaml': 'kind: [unclosed\n' },
      'Oops',
    );
    expect(status.outcome).toBe('invalid');
    expect(status.errors.map((e: any) => e.file)).toEqual(['appliance/broken.yaml']);
    expect((await initiators()).find((i) => i.wwpn.startsWith('iqn.'))?.alias).toBe('backup host A (rack 4)');
  }, 300_000);

  it('a commit removing an object prunes it; what was made through the API stays', async () => {
    const { status } = await sync(
      { ...manifests({ alias: 'backup host A (rack 4)', withHostB: false }), 'appliance/broken.yaml': null },
      'Retire host B',
    );
    expect(status.outcome, status.message).toBe('applied');
    const names = (await initiators()).map((i) => i.wwpn);
    expect(names).toContain('iqn.2026-01.com.example:host-a');
    expect(names).not.toContain('naa.21000024ff00000b');
    const remotes = ((await app.api.get('/api/remotes')).body as any[]).map((r) => r.name);
    expect(remotes).toEqual(expect.arrayContaining(['by-hand', 'offsite']));
    // The appliance's first pool was made at install, not by the source: never pruned.
    expect(((await app.api.get('/api/pools')).body as any[]).length).toBe(2);
  }, 300_000);

  it('a REST edit of an owned object is put back on the next sync and reported in an event', async () => {
    const remote = ((await app.api.get('/api/remotes')).body as any[]).find((r) => r.name === 'offsite');
    expect((await app.api.put(`/api/remotes/${remote.id}`, { prefix: 'edited-by-hand' })).status).toBe(200);
    const { status } = await sync({}, 'An empty commit: the next sync');
    expect(status.outcome, status.message).toBe('applied');
    const after = ((await app.api.get('/api/remotes')).body as any[]).find((r) => r.name === 'offsite');
    expect(after.prefix).toBe('');
    const events = (await app.api.get('/api/events/search?kind=gitops_drift_corrected')).body as any[];
    expect(events).toContainEqual(
      expect.objectContaining({ subject: 'TapeRemote/offsite', detail: expect.stringContaining('prefix') }),
    );
  }, 300_000);
});
