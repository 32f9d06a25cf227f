import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { Cdb } from '@vtl/emulator';
import { LibIscsiSession } from '@vtl/emulator/testing/libiscsi';
import { buildBundle, openBundle, writeBundle } from '@vtl/updater';
import { Appliance } from './harness/appliance.js';
import { postMultipart } from './harness/multipart.js';
import { processesOf } from './harness/processes.js';

const root = path.resolve(import.meta.dirname, '../..');
const HOST_IQN = 'iqn.2026-11.test.host:updates';
const MIB = 1024 * 1024;

/**
 * A copy of the real build whose apiserver dies at once: a release that never becomes healthy.
 * Every other package's dist/ is a link to the real build (the bundle follows links).
 */
async function brokenTree(dir: string): Promise<string> {
  const pkg = JSON.parse(await fs.readFile(path.join(root, 'package.json'), 'utf8')) as {
    workspaces: string[];
  };
  await fs.copyFile(path.join(root, 'package.json'), path.join(dir, 'package.json'));
  await fs.copyFile(path.join(root, 'package-lock.json'), path.join(dir, 'package-lock.json'));
  for (const ws of pkg.workspaces) {
    await fs.mkdir(path.join(dir, ws));
    await fs.copyFile(path.join(root, ws, 'package.json'), path.join(dir, ws, 'package.json'));
    if (ws === 'apiserver')
      await fs.cp(path.join(root, ws, 'dist'), path.join(dir, ws, 'dist'), { recursive: true });
    else await fs.symlink(path.join(root, ws, 'dist'), path.join(dir, ws, 'dist'));
  }
  await fs.writeFile(
    path.join(dir, 'apiserver', 'dist', 'server.js'),
    "console.error('this release is broken on purpose'); process.exit(1);\n",
  );
  return dir;
}

describe('signed updates: upload, detached apply, automatic and manual rollback (§4.3, §2.20, §9)', () => {
  let app: Appliance;
  let tmp: string;
  let key: { privateKey: KeyObject; publicKey: KeyObject };
  let session: LibIscsiSession | undefined;
  let emulatorPid: number;
  const bundles: Record<string, string> = {};

  const upload = (file: string | Readable, fields: Record<string, string> = {}) =>
    postMultipart({
      baseUrl: `https://127.0.0.1:${app.ports.https}`,
      token: app.api.token,
      path: '/api/system/update',
      fields,
      fileField: 'bundle',
      file,
    });
  const status = async () => (await app.api.get('/api/system/update-status')).body;
  const healthVersion = async () =>
    (await app.plain.get('/healthz').catch(() => undefined))?.body?.version as string | undefined;
  /** Waits until the updater has finished (no pending record) and returns the status. */
  const settled = async (timeoutMs: number) =>
    (await waitFor(
      async () => {
        const s = await status().catch(() => undefined);
        return s && s.pending === null && s.last_result ? s : false;
      },
      { timeoutMs, intervalMs: 500 },
    )) as any;
  /** Nothing of a refused upload stays behind: no update dir, no release, no pending record. */
  const nothingChanged = async () => {
    expect(await fs.readdir(path.join(app.stateDir, 'updates')).catch(() => [])).toEqual([]);
    expect((await fs.readdir(path.join(app.stateDir, 'releases'))).sort()).toEqual(['factory']);
    const s = await status();
    expect(s).toMatchObject({ version: 'v0.1.0', pending: null, last_good: null });
    expect(await healthVersion()).toBe('v0.1.0');
  };
  /**
   * Sends TEST UNIT READY every 200 ms until stopped: host I/O must go on while the control
   * plane restarts. Resolves with the commands sent and the ones that failed.
   */
  const keepHostBusy = () => {
    let running = true;
    const result = { sent: 0, failed: [] as string[] };
    const loop = (async () => {
      while (running) {
        result.sent++;
        const r = await session!.command(0, Cdb.tur()).catch((err: Error) => ({ status: -1, err }));
        if (r.status !== 0) result.failed.push(`TUR ${result.sent}: status ${r.status}`);
        await new Promise((res) => setTimeout(res, 200));
      }
    })();
    return async () => {
      running = false;
      await loop;
      return result;
    };
  };
  const sessionWorks = async () => {
    const inquiry = await session!.command(0, Cdb.inquiry(96), { dataInLength: 96 });
    expect(inquiry.status).toBe(0);
    expect(inquiry.data.subarray(16, 32).toString()).toContain('03584L32');
  };

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-e2e-update-'));
    key = generateKeyPairSync('ed25519');
    const trusted = path.join(tmp, 'trusted.pem');
    await fs.writeFile(trusted, key.publicKey.export({ type: 'spki', format: 'pem' }));
    const build = (name: string, version: string, extra: object = {}) =>
      buildBundle({
        from: root,
        out: (bundles[name] = path.join(tmp, `${name}.tar.gz`)),
        key: key.privateKey,
        version,
        ...extra,
      });
    await build('good', 'v0.2.0');
    await build('older', 'v0.0.9');
    await build('dataplane', 'v0.4.0', { components: ['control-plane', 'data-plane'] });
    const other = generateKeyPairSync('ed25519');
    await buildBundle({
      from: root,
      out: (bundles.otherKey = path.join(tmp, 'other-key.tar.gz')),
      key: other.privateKey,
      version: 'v0.2.0',
    });
    // The good bundle with a payload altered after signing.
    const parts = await openBundle(bundles.good!, await fs.mkdtemp(path.join(tmp, 'open-')));
    await fs.appendFile(parts.payloadFile, 'tampered');
    await writeBundle(
      (bundles.tampered = path.join(tmp, 'tampered.tar.gz')),
      parts.manifestBytes,
      parts.signatureBytes,
      parts.payloadFile,
    );
    const broken = await brokenTree(await fs.mkdtemp(path.join(tmp, 'broken-')));
    await buildBundle({
      from: broken,
      out: (bundles.broken = path.join(tmp, 'broken.tar.gz')),
      key: key.privateKey,
      version: 'v0.5.0',
    });

    app = await Appliance.start({
      env: {
        VTL_UPDATE_TRUSTED_KEYS_FILE: trusted,
        VTL_UPDATE_DEADLINE_SEC: '60',
        VTL_UPDATE_ATTEMPT_LIMIT: '2',
      },
    });
    const pool = (await app.api.get('/api/pools')).body[0];
    const declared = await app.api.post('/api/libraries', {
      name: 'updates',
      product: '03584L32',
      drive_product: 'ULT3580-TD9',
      num_drives: 1,
      num_slots: 0,
      num_map: 0,
      label_prefix: 'UPD',
      pool_id: pool.id,
    });
    expect(declared.status).toBe(201);
    await app.apply();
    // A backup host's iSCSI session: it must keep working through every update and rollback.
    const portal = `127.0.0.1:${app.ports.iscsi}`;
    const [target] = await LibIscsiSession.discover(portal, HOST_IQN);
    session = await LibIscsiSession.connect(portal, target!.targetName, HOST_IQN);
    await waitFor(async () => (await session!.command(0, Cdb.tur())).status === 0, { timeoutMs: 10_000 });
    emulatorPid = (await processesOf(app.stateDir)).emulator[0]!;
  }, 240_000);

  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await app?.destroy();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  });

  it('reports the running release and nothing pending before any update', async () => {
    const s = await status();
    expect(s).toMatchObject({ version: 'v0.1.0', pending: null, last_good: null, last_result: null });
    expect(Number.isNaN(Date.parse(s.build))).toBe(false);
  });

  it.each([
    ['a payload altered after signing', 'tampered', {}, 'signature'],
    ['a bundle signed with an untrusted key', 'otherKey', {}, 'signature'],
    ['an older version without force', 'older', {}, 'version'],
    ['a bundle that also replaces the data plane', 'dataplane', {}, 'data_plane'],
  ])('refuses %s with 400 and leaves nothing behind', async (_what, name, fields, reason) => {
    const res = await upload(bundles[name]!, fields);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.details.reason).toBe(reason);
    if (reason === 'data_plane') expect(res.body.error.message).toMatch(/installer in a maintenance window/);
    await nothingChanged();
  });

  it('refuses a body over 512 MiB with 400 without storing it', async () => {
    let sent = 0;
    const chunk = Buffer.alloc(MIB);
    const endless = new Readable({
      read() {
        sent += chunk.length;
        this.push(sent > 600 * MIB ? null : chunk);
      },
    });
    const res = await upload(endless);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toMatchObject({ reason: 'too_large', limit_bytes: 512 * MIB });
    await nothingChanged();
  }, 120_000);

  it('refuses a rollback with nothing to roll back to', async () => {
    const res = await app.api.post('/api/system/rollback', { confirm: 'rollback' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.reason).toBe('nothing_to_roll_back');
  });

  it('settles at once the update of an updater killed -9 mid-apply: reported, put back, uploads accepted again', async () => {
    const res = await upload(bundles.good!);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    // Frozen the moment it has claimed the record, so the kill lands mid-apply (before the switch).
    const pid = (await waitFor(async () => (await status()).pending?.updater?.pid ?? false, {
      timeoutMs: 30_000,
      intervalMs: 20,
    })) as number;
    process.kill(pid, 'SIGSTOP');
    const frozen = (await status()).pending;
    expect(frozen.updater).toMatchObject({
      pid,
      boot_id: expect.any(String),
      start_ticks: expect.any(String),
    });
    expect(frozen.step).not.toMatch(/switched|restarting/);
    process.kill(pid, 'SIGKILL');
    // Seen as soon as the process is gone: well before any deadline (60 s here) or timeout. The
    // status request waits for the updater's settle run, a child process that loads the store
    // client (about 1 s of CPU; 15 s was seen at a load average of 28 on two cores): half the
    // deadline still tells a settle at once from one at the deadline.
    const t0 = Date.now();
    const s = (await waitFor(
      async () => {
        const now = await status();
        return now.pending === null ? now : false;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    )) as any;
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(s.last_result).toMatchObject({ ok: false, action: 'update', version: 'v0.1.0' });
    expect(s.last_result.detail).toMatch(
      new RegExp(
        `updater pid ${pid} is no longer running.*v0\\.2\\.0 was not applied.*Upload the bundle again`,
      ),
    );
    const events = (await app.api.get('/api/events/search?kind=update_taken_over&limit=10')).body;
    expect(events[0]).toMatchObject({ kind: 'update_taken_over', detail: s.last_result.detail });
    // Put back as it was: no release directory, no update files, the old version answering.
    await nothingChanged();
    expect((await processesOf(app.stateDir)).emulator).toEqual([emulatorPid]);
    await sessionWorks();
    // The next test's upload is accepted: the record no longer blocks.
  }, 120_000);

  it('applies a newer release through the detached updater: /healthz reports it, host I/O goes on', async () => {
    const busy = keepHostBusy();
    const res = await upload(bundles.good!);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({
      from: 'v0.1.0',
      to: 'v0.2.0',
      unit: expect.stringMatching(/^vtl-updater-/),
    });
    expect(Number.isNaN(Date.parse(res.body.built))).toBe(false);
    // A second upload while the first is applied never wins too.
    const second = await upload(bundles.good!);
    expect([409, 400]).toContain(second.status);

    const s = await settled(120_000);
    expect(s.last_result).toMatchObject({ ok: true, version: 'v0.2.0' });
    expect(s.version).toBe('v0.2.0');
    expect(s.last_good).toMatchObject({ from_version: 'v0.1.0', to_version: 'v0.2.0', attempt_limit: 2 });
    for (const field of ['binary', 'prev_binary', 'db_path', 'db_snapshot', 'staged_at', 'deadline'])
      expect(s.last_good[field], field).toBeTruthy();
    expect(await fs.stat(s.last_good.db_snapshot)).toBeTruthy();
    expect(await fs.realpath(s.last_good.prev_binary)).toBe(await fs.realpath(root));
    expect(await healthVersion()).toBe('v0.2.0');
    expect((await app.api.get('/api/system')).body.version).toBe('v0.2.0');
    // The control plane runs from the new release directory; the emulator was never restarted.
    const apiserver = (await processesOf(app.stateDir)).apiserver[0]!;
    expect(await fs.readFile(`/proc/${apiserver}/cmdline`, 'utf8')).toContain(s.last_good.binary);
    expect((await processesOf(app.stateDir)).emulator).toEqual([emulatorPid]);
    const io = await busy();
    expect(io.sent).toBeGreaterThan(10);
    expect(io.failed).toEqual([]);
    await sessionWorks();
    const events = (await app.api.get('/api/events/search?kind=update_step&limit=50')).body;
    expect(events.map((e: any) => e.detail)).toEqual(
      expect.arrayContaining([expect.stringMatching(/store snapshot taken/)]),
    );
  }, 180_000);

  it('rolls back by hand to the previous release and the snapshot taken before the update', async () => {
    // A record created after the update: the snapshot does not have it.
    const created = await app.api.post('/api/users', {
      username: 'after-update',
      password: 'a-long-password-1',
      role: 'read-only',
    });
    expect(created.status).toBe(201);
    const res = await app.api.post('/api/system/rollback', { confirm: 'rollback' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      from: 'v0.2.0',
      to: 'v0.1.0',
      unit: expect.stringMatching(/^vtl-updater-/),
    });
    const s = await settled(120_000);
    // On a miss, say what the updaters did.
    const updateEvents = async () =>
      JSON.stringify({ status: s, events: (await app.api.get('/api/events/search?limit=40')).body });
    if (s.last_result?.action !== 'rollback') expect.fail(await updateEvents());
    expect(s.last_result).toMatchObject({ ok: true, action: 'rollback', version: 'v0.1.0' });
    expect(s).toMatchObject({ version: 'v0.1.0', last_good: null });
    expect(await healthVersion()).toBe('v0.1.0');
    const users = (await app.api.get('/api/users')).body.map((u: any) => u.username);
    expect(users).not.toContain('after-update');
    expect((await processesOf(app.stateDir)).emulator).toEqual([emulatorPid]);
    await sessionWorks();
    expect((await app.api.post('/api/system/rollback', { confirm: 'rollback' })).status).toBe(400);
  }, 180_000);

  it('rolls a release that never becomes healthy back by itself', async () => {
    const res = await upload(bundles.broken!);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const s = await settled(240_000);
    expect(s.last_result).toMatchObject({ ok: false, version: 'v0.1.0' });
    expect(s.last_result.detail).toMatch(/rolled back to v0.1.0/);
    expect(s.version).toBe('v0.1.0');
    expect(s.last_good).toBeNull();
    expect(await healthVersion()).toBe('v0.1.0');
    expect((await processesOf(app.stateDir)).emulator).toEqual([emulatorPid]);
    await sessionWorks();
  }, 300_000);
});
