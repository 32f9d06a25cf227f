import { createHash, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys, RemoteSecret } from '@vtl/api';
import { waitFor } from '@vtl/reconcile';
import { parseKeyFile } from '@vtl/sealing';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { Appliance } from './harness/appliance.js';
import { etcdctl, filesUnder, textsInFiles } from './harness/etcdctl.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const JOB_DONE = ['succeeded', 'failed', 'cancelled', 'interrupted'];

/**
 * Issue 12, items 1 and 2, replayed as an attacker with a shell on the appliance would: the
 * store answers only clients with a certificate of the appliance's CA, and the S3 secret is
 * sealed wherever etcd keeps it (data directory, snapshot). Rotation of the sealing key keeps
 * the remote working; a missing key file says what to do.
 */
describe('the store is the appliance’s alone, and its secrets are sealed', () => {
  let rgw: TestRgw;
  let app: Appliance;
  let remoteId: number;
  let secretKey: string;
  const plainEndpoint = () => `http://127.0.0.1:${app.ports.etcdClient}`;
  const sealingKeyFile = () => path.join(app.stateDir, 'pki', 'sealing.key');
  const kids = async () => parseKeyFile(await fs.readFile(sealingKeyFile(), 'utf8'), 'f').map((k) => k.kid);

  beforeAll(async () => {
    rgw = await startTestRgw();
    app = await Appliance.start();
    secretKey = rgw.secret_key;
    const remote = await app.api.post('/api/remotes', rgw.remoteRequest('rgw'));
    expect(remote.status, remote.text).toBe(201);
    remoteId = remote.body.id;
    const pool = (await app.api.get('/api/pools')).body[0];
    const lib = await app.api.post('/api/libraries', {
      name: 'sealed',
      product: '3573-TL',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 4,
      num_map: 1,
      label_prefix: 'SEA',
      pool_id: pool.id,
    });
    expect(lib.status, lib.text).toBe(201);
    await app.apply();
    expect((await app.api.post('/api/cartridges', { library: lib.body.library, count: 2 })).status).toBe(200);
  }, 300_000);
  afterAll(async () => {
    await app?.destroy();
    await rgw?.stop();
  });

  it('keeps the PKI and the sealing key private: directory 0700, keys 0600', async () => {
    const dir = path.join(app.stateDir, 'pki');
    expect((await fs.stat(dir)).mode & 0o777).toBe(0o700);
    const files = await fs.readdir(dir);
    for (const f of [
      'ca.key',
      'etcd.key',
      'apiserver.key',
      'controller.key',
      'nodeagent.key',
      'admin.key',
      'sealing.key',
    ]) {
      expect(files).toContain(f);
      expect((await fs.stat(path.join(dir, f))).mode & 0o777, f).toBe(0o600);
    }
  });

  it('hands each process its own client certificate', async () => {
    for (const [id, entry] of [
      ['apiserver', 'apiserver/dist/server.js'],
      ['controller', 'controller/dist/main.js'],
      ['nodeagent', 'nodeagent/dist/main.js'],
    ] as const) {
      const pid = await app.childPid(entry);
      const environ = (await fs.readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
      expect(environ, id).toContain(`VTL_ETCD_CERT_FILE=${path.join(app.stateDir, 'pki', `${id}.crt`)}`);
      expect(environ, id).toContain(`VTL_ETCD_KEY_FILE=${path.join(app.stateDir, 'pki', `${id}.key`)}`);
      expect(environ, id).toContain(`VTL_ETCD_CA_FILE=${path.join(app.stateDir, 'pki', 'ca.crt')}`);
    }
  });

  it('refuses etcdctl over plain HTTP and over HTTPS without a client certificate: the S3 secret stays unread', async () => {
    const get = ['get', keys.remoteSecrets.one(remoteId)];
    const plain = await etcdctl(plainEndpoint(), get);
    expect(plain.code).not.toBe(0);
    expect(plain.out).not.toContain(secretKey);
    const certless = await etcdctl(app.etcdEndpoint, get, { caOnly: app.storeTls.caFile });
    expect(certless.code).not.toBe(0);
    expect(certless.out).not.toContain(secretKey);
    // etcd itself turned both away, at the TLS handshake.
    const etcdLog = await fs.readFile(path.join(app.stateDir, 'logs', 'etcd.log'), 'utf8');
    expect(etcdLog).toMatch(/rejected connection .*first record does not look like a TLS handshake/);
    expect(etcdLog).toMatch(/rejected connection .*client didn't provide a certificate/);
    // With the appliance's own certificate the record is there, and even then sealed.
    const admin = await etcdctl(app.etcdEndpoint, get, { tls: app.storeTls });
    expect(admin.code, admin.out).toBe(0);
    expect(admin.out).toContain('"sealed":"v1"');
    expect(admin.out).not.toContain(secretKey);
  });

  it('refuses a session forged in the store without a certificate', async () => {
    const token = `vtls_${randomBytes(32).toString('base64url')}`;
    const key = keys.sessions.one(createHash('sha256').update(token).digest('hex'));
    const now = Date.now();
    const record = JSON.stringify({
      username: 'admin',
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + 3_600_000).toISOString(),
    });
    const whoami = () => app.anonymous.withToken(token).get('/api/auth/whoami');
    expect((await etcdctl(plainEndpoint(), ['put', key, record])).code).not.toBe(0);
    expect(
      (await etcdctl(app.etcdEndpoint, ['put', key, record], { caOnly: app.storeTls.caFile })).code,
    ).not.toBe(0);
    expect((await whoami()).status).toBe(401);
    // The same record would have let the attacker in: the certificate is what stops it.
    expect((await etcdctl(app.etcdEndpoint, ['put', key, record], { tls: app.storeTls })).code).toBe(0);
    expect((await whoami()).status).toBe(200);
    expect((await etcdctl(app.etcdEndpoint, ['del', key], { tls: app.storeTls })).code).toBe(0);
    expect((await whoami()).status).toBe(401);
  });

  it('never has the S3 secret in clear in the etcd data directory nor in a snapshot of it', async () => {
    // A second write leaves an older revision of the sealed record behind: both must be sealed.
    expect((await app.api.put(`/api/remotes/${remoteId}`, { secret_key: secretKey })).status).toBe(200);
    const snapshot = path.join(app.stateDir, 'etcd-snapshot.db');
    const saved = await etcdctl(app.etcdEndpoint, ['snapshot', 'save', snapshot], { tls: app.storeTls });
    expect(saved.code, saved.out).toBe(0);
    const files = await textsInFiles(
      [...(await filesUnder(path.join(app.stateDir, 'etcd'))), snapshot],
      [rgw.access_key, secretKey],
    );
    // The search sees the store's contents: the access key (not a secret) is there in clear,
    // in the snapshot too.
    expect(files.some((f) => f.holds(rgw.access_key))).toBe(true);
    expect(files.find((f) => f.file === snapshot)?.holds(rgw.access_key)).toBe(true);
    for (const f of files) expect(f.holds(secretKey), `S3 secret in clear in ${f.file}`).toBe(false);
    await fs.rm(snapshot);
  });

  it('rotates the sealing key: every secret re-sealed (a plaintext one migrated), the remote still works', async () => {
    // A secret from before sealing existed, stored in clear.
    const legacy = JSON.stringify({ secret_key: secretKey } satisfies RemoteSecret);
    expect(
      (
        await etcdctl(app.etcdEndpoint, ['put', keys.remoteSecrets.one(remoteId), legacy], {
          tls: app.storeTls,
        })
      ).code,
    ).toBe(0);
    const [oldKid] = await kids();
    const { stdout } = await run(process.execPath, [path.join(root, 'appliance/dist/seal-rotate.js')], {
      env: {
        ...process.env,
        VTL_STATE_DIR: app.stateDir,
        VTL_ETCD_CLIENT_PORT: String(app.ports.etcdClient),
      },
    });
    const [newKid] = await kids();
    expect(newKid).not.toBe(oldKid);
    expect(await kids()).toEqual([newKid]);
    expect(stdout).toContain(
      `sealed with key ${newKid}: 1 re-sealed (1 of them were in clear); retired ${oldKid}`,
    );
    const store = await app.connectStore();
    try {
      expect(await store.secretSeals()).toEqual([
        expect.objectContaining({ key: keys.remoteSecrets.one(remoteId), kid: newKid }),
      ]);
      expect((await store.get(keys.remoteSecrets.one(remoteId), RemoteSecret))?.value.secret_key).toBe(
        secretKey,
      );
    } finally {
      await store.close();
    }
    // The apiserver opens it with the new key (it re-read the key file) ...
    const tested = await app.api.post(`/api/remotes/${remoteId}/test`, {});
    expect(tested.body, tested.text).toMatchObject({ ok: true });
    // ... and so does the nodeagent, which carries out the export.
    const exp = await app.api.post('/api/cartridges/SEA001L8/export', { remote_id: remoteId });
    expect(exp.status, exp.text).toBe(201);
    let job: any;
    await waitFor(
      async () => JOB_DONE.includes((job = (await app.api.get(`/api/jobs/${exp.body.id}`)).body).state),
      {
        timeoutMs: 120_000,
        intervalMs: 200,
      },
    );
    expect(job.state, JSON.stringify(job)).toBe('succeeded');
  });

  it('says what to do when the sealing key file is missing, and works again once it is back', async () => {
    const aside = `${sealingKeyFile()}.aside`;
    await fs.rename(sealingKeyFile(), aside);
    try {
      const tested = await app.api.post(`/api/remotes/${remoteId}/test`, {});
      expect(tested.text).toMatch(
        /sealing key file .*sealing\.key cannot be read \(ENOENT\).*back from your backup/,
      );
      expect(tested.text).not.toContain(secretKey);
      const store = await app.connectStore();
      try {
        await expect(store.get(keys.remoteSecrets.one(remoteId), RemoteSecret)).rejects.toThrow(
          /VTL_SEALING_KEY_FILE/,
        );
      } finally {
        await store.close();
      }
    } finally {
      await fs.rename(aside, sealingKeyFile());
    }
    expect((await app.api.post(`/api/remotes/${remoteId}/test`, {})).body).toMatchObject({ ok: true });
  });
});
