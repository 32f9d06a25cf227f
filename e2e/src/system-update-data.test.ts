import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { Cdb } from '@vtl/emulator';
import { LibIscsiSession, type CommandResult } from '@vtl/emulator/testing/libiscsi';
import { CodecPool, importCartridge } from '@vtl/offsite';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { buildBundle } from '@vtl/updater';
import { Appliance } from './harness/appliance.js';
import { postMultipart } from './harness/multipart.js';

const root = path.resolve(import.meta.dirname, '../..');
const HOST_IQN = 'iqn.2026-11.test.host:update-data';
const SLOT = (n: number) => 0x1000 + n - 1;
const DRIVE_0 = 0x0100;
const BLOCK = 65_536;
/** The smallest export chunk: one chunk per block, so the export is still moving during the update. */
const CHUNK_BYTES = 64 * 1024;
/** Blocks of the exported cartridge: enough chunks to outlast the upload, install and restart. */
const EXPORT_BLOCKS = 640;
const JOB_DONE = ['succeeded', 'failed', 'cancelled', 'interrupted'];
const senseKey = (r: CommandResult) => (r.sense.length > 2 ? r.sense[2]! & 0x0f : -1);

/** SHA-256 of every file under `dir` (relative path → digest). */
async function checksums(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out[path.relative(dir, file)] = createHash('sha256')
      .update(await fs.readFile(file))
      .digest('hex');
  }
  return out;
}

/**
 * What an update and a rollback do to data (issue 18): an export running when the update is
 * uploaded is resumed by the restarted control plane and its bucket copy equals the cartridge;
 * an iSCSI session open across the update keeps reading and writing; a rollback restores the
 * store, never the pools, and reports the cartridge images whose records it dropped.
 */
describe('signed updates and data: a running export, host I/O and cartridge bytes across update and rollback', () => {
  let rgw: TestRgw;
  let app: Appliance;
  let tmp: string;
  let bundle: string;
  let session: LibIscsiSession;
  let remoteId: number;
  let library: { id: number; serial: string; media_dir: string };
  const hostBlocks: Buffer[] = [];

  const api = () => app.api;
  const status = async () => (await api().get('/api/system/update-status')).body;
  const job = async (id: number) => (await api().get(`/api/jobs/${id}`)).body;
  const labels = async () =>
    (await api().get('/api/cartridges')).body.map((c: { label: string }) => c.label) as string[];
  /** Waits for the updater to finish (the apiserver restarts meanwhile: errors are retried). */
  const settled = async (timeoutMs: number) =>
    (await waitFor(
      async () => {
        const s = await status().catch(() => undefined);
        return s && s.pending === null && s.last_result ? s : false;
      },
      { timeoutMs, intervalMs: 500 },
    )) as any;
  const block = (tag: string) =>
    Buffer.concat([Buffer.from(`${tag} `), randomBytes(BLOCK)]).subarray(0, BLOCK);

  async function settle(lun: number) {
    await waitFor(async () => {
      const r = await session.command(lun, Cdb.tur());
      return r.status === 0 || senseKey(r) !== 0x06;
    });
  }
  async function move(from: number, to: number) {
    await settle(0);
    await waitFor(async () => (await session.command(0, Cdb.moveMedium(from, to))).status === 0, {
      timeoutMs: 30_000,
    });
  }
  async function write(data: Buffer) {
    const r = await session.command(1, Cdb.write6(data.length), { dataOut: data });
    expect(r.status, `write: sense ${r.sense.toString('hex')}`).toBe(0);
  }
  /** The host appends a block to the cartridge in drive 0 (after what it wrote so far). */
  async function hostAppends(tag: string) {
    await settle(1);
    expect((await session.command(1, Cdb.rewind())).status).toBe(0);
    for (let i = 0; i < hostBlocks.length; i++) {
      const r = await session.command(1, Cdb.read6(BLOCK), { dataInLength: BLOCK });
      expect(r.status, `skip block ${i}: sense ${r.sense.toString('hex')}`).toBe(0);
    }
    const b = block(tag);
    await write(b);
    hostBlocks.push(b);
  }
  /** The host reads back every block it wrote to the cartridge in drive 0. */
  async function hostReadsBack() {
    await settle(1);
    expect((await session.command(1, Cdb.rewind())).status).toBe(0);
    for (const [i, b] of hostBlocks.entries()) {
      const r = await session.command(1, Cdb.read6(BLOCK), { dataInLength: BLOCK });
      expect(r.status, `block ${i}: sense ${r.sense.toString('hex')}`).toBe(0);
      expect(r.data.equals(b), `block ${i} reads back as written`).toBe(true);
    }
  }
  const upload = (file: string) =>
    postMultipart({
      baseUrl: `https://127.0.0.1:${app.ports.https}`,
      token: api().token,
      path: '/api/system/update',
      fields: {},
      fileField: 'bundle',
      file,
    });

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-e2e-update-data-'));
    const key = generateKeyPairSync('ed25519');
    const trusted = path.join(tmp, 'trusted.pem');
    await fs.writeFile(trusted, key.publicKey.export({ type: 'spki', format: 'pem' }));
    bundle = path.join(tmp, 'good.tar.gz');
    // The three are independent: at once. All settled before a failure is thrown, so afterAll
    // stops whatever did start.
    const started = await Promise.allSettled([
      buildBundle({ from: root, out: bundle, key: key.privateKey, version: 'v0.2.0' }),
      startTestRgw().then((r) => (rgw = r)),
      Appliance.start({
        env: {
          VTL_UPDATE_TRUSTED_KEYS_FILE: trusted,
          VTL_UPDATE_DEADLINE_SEC: '120',
          VTL_EXPORT_CHUNK_BYTES: String(CHUNK_BYTES),
        },
      }).then((a) => (app = a)),
    ]);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const pool = (await api().get('/api/pools')).body[0];
    const lib = await api().post('/api/libraries', {
      name: 'update-data',
      product: '3573-TL',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 8,
      num_map: 2,
      label_prefix: 'UPD',
      pool_id: pool.id,
    });
    expect(lib.status, lib.text).toBe(201);
    await app.apply();
    expect((await api().post('/api/cartridges', { library: lib.body.library, count: 2 })).status).toBe(200);
    library = (await api().get('/api/libraries')).body.find((l: any) => l.id === lib.body.library);
    const portal = `127.0.0.1:${app.ports.iscsi}`;
    const [target] = await LibIscsiSession.discover(portal, HOST_IQN);
    session = await LibIscsiSession.connect(portal, target!.targetName, HOST_IQN);
    // UPD001L8: the cartridge exported during the update, written by the host.
    await move(SLOT(1), DRIVE_0);
    await settle(1);
    expect((await session.command(1, Cdb.rewind())).status).toBe(0);
    for (let i = 0; i < EXPORT_BLOCKS; i++) await write(block(`UPD001L8 block ${i}`));
    expect((await session.command(1, Cdb.writeFilemarks(1))).status).toBe(0);
    await move(DRIVE_0, SLOT(1));
    // UPD002L8 stays in the drive: the host's I/O across the update and the rollback.
    await move(SLOT(2), DRIVE_0);
    await hostAppends('before the update');
    const remote = await api().post('/api/remotes', rgw.remoteRequest('rgw', { prefix: 'e2e' }));
    expect(remote.status, remote.text).toBe(201);
    remoteId = remote.body.id;
  }, 400_000);

  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await app?.destroy();
    await rgw?.stop();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  });

  it('resumes an export that runs during the update, and its bucket copy equals the cartridge', async () => {
    const created = await api().post('/api/cartridges/UPD001L8/export', { remote_id: remoteId });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id;
    await waitFor(async () => (await job(id)).chunks_done >= 2, { timeoutMs: 120_000, intervalMs: 100 });

    const res = await upload(bundle);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    // The export must still be moving when the updater restarts the control plane, however fast
    // it runs here: S3 stands still (radosgw stopped, a chunk upload hanging) until the updater
    // has switched releases, a second before it asks for the restart.
    rgw.pause();
    try {
      await waitFor(
        async () => {
          const s = await status().catch(() => undefined);
          return !s || s.pending === null || /switched|restarting/.test(s.pending.step);
        },
        { timeoutMs: 120_000, intervalMs: 100 },
      );
    } finally {
      rgw.resume();
    }
    expect(JOB_DONE).not.toContain((await job(id).catch(() => ({ state: 'unknown' }))).state);
    const s = await settled(240_000);
    expect(s.last_result).toMatchObject({ ok: true, version: 'v0.2.0' });

    const done = await waitFor(
      async () => {
        const j = await job(id).catch(() => undefined);
        return j && JOB_DONE.includes(j.state) ? j : false;
      },
      { timeoutMs: 240_000, intervalMs: 250 },
    );
    expect(done.state, done.error).toBe('succeeded');
    // Resumed by the restarted nodeagent, not interrupted for an operator to retry.
    expect(done.attempts).toBe(1);
    const events = (await api().get('/api/events/search?kind=job_update&limit=10000')).body as Array<{
      subject: string;
      detail: string;
    }>;
    const details = events
      .filter((e) => e.subject === `job:${id}`)
      .reverse()
      .map((e) => e.detail);
    const paused = details.findIndex((d) =>
      /paused: the update to v0\.2\.0 restarts the control plane/.test(d),
    );
    expect(paused, details.slice(-5).join('\n')).toBeGreaterThan(0);
    expect(details.slice(paused + 1).some((d) => /resumed: \d+ chunks were verified before/.test(d))).toBe(
      true,
    );
    expect(details.some((d) => /interrupted/.test(d))).toBe(false);
    // Each verified chunk announced once: the count never started over.
    const counts = details
      .map((d) => /uploaded (\d+) chunks/.exec(d)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number);
    for (let k = 1; k < counts.length; k++) expect(counts[k]).toBeGreaterThan(counts[k - 1]!);
    expect(done.chunks_done).toBeGreaterThan(counts[0]!);

    // The bucket's copy, downloaded and unpacked, is the cartridge's image byte for byte.
    const codec = new CodecPool();
    const copy = path.join(tmp, 'from-s3');
    try {
      await importCartridge({
        remote: rgw.remote('e2e'),
        ref: {
          system: done.system_name,
          library_serial: done.library_serial,
          label: 'UPD001L8',
          generation: done.generation,
        },
        dir: copy,
        codec,
      });
    } finally {
      await codec.close();
    }
    const fromS3 = await checksums(copy);
    const onPool = await checksums(path.join(library.media_dir, 'UPD001L8'));
    expect(Object.keys(fromS3).length).toBeGreaterThan(0);
    for (const [file, sum] of Object.entries(fromS3)) expect(onPool[file], file).toBe(sum);
  }, 600_000);

  it('keeps the host session that was open across the update: it writes and reads blocks after it', async () => {
    expect((await status()).version).toBe('v0.2.0');
    await hostAppends('after the update');
    await hostReadsBack();
  }, 120_000);

  it('rolls back without touching a cartridge byte; records since the update are gone, their images reported', async () => {
    // After the update: more data on a cartridge that existed before, and a cartridge minted now.
    await hostAppends('written on v0.2.0');
    const mint = await api().post('/api/cartridges', { library: library.id, count: 1 });
    expect(mint.status, mint.text).toBe(200);
    const late = mint.body.created[0].label as string;
    await waitFor(
      async () => (await fs.stat(path.join(library.media_dir, late)).catch(() => undefined)) !== undefined,
      {
        timeoutMs: 30_000,
      },
    );
    // Out of the drive, so nothing the host does moves a byte while the rollback runs.
    await move(DRIVE_0, SLOT(2));
    const imagesOf = async () => {
      const all: Record<string, Record<string, string>> = {};
      for (const e of await fs.readdir(library.media_dir, { withFileTypes: true }))
        if (e.isDirectory() && !e.name.startsWith('.'))
          all[e.name] = await checksums(path.join(library.media_dir, e.name));
      return all;
    };
    const before = await imagesOf();
    expect(Object.keys(before).sort()).toEqual(['UPD001L8', 'UPD002L8', late].sort());

    const res = await api().post('/api/system/rollback', { confirm: 'rollback' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ from: 'v0.2.0', to: 'v0.1.0', orphaned_cartridges: [late] });
    expect(res.body.detail).toContain(late);
    const s = await settled(240_000);
    // On a miss, say what the updaters did (a CI run once saw the update's result here).
    const updateEvents = async () =>
      JSON.stringify({ status: s, events: (await api().get('/api/events/search?limit=40')).body });
    if (s.last_result?.action !== 'rollback') expect.fail(await updateEvents());
    expect(s.last_result).toMatchObject({ ok: true, action: 'rollback', version: 'v0.1.0' });
    expect(s.last_result.orphan_images).toEqual([
      { label: late, library: library.id, path: path.join(library.media_dir, late) },
    ]);
    expect(s.version).toBe('v0.1.0');

    // The pools are exactly as they were just before the rollback, the late image included.
    expect(await imagesOf()).toEqual(before);
    // The records are the snapshot's: the late cartridge's record is gone, the others are there.
    const now = await labels();
    expect(now).not.toContain(late);
    expect(now).toEqual(expect.arrayContaining(['UPD001L8', 'UPD002L8']));
    const orphanEvents = (await api().get('/api/events/search?kind=update_orphan_images&limit=10')).body;
    expect(orphanEvents[0]?.detail).toContain(late);
    // The host still reads everything it wrote, including what it wrote on v0.2.0.
    await move(SLOT(2), DRIVE_0);
    await hostReadsBack();

    // What docs/updates.md tells the operator to do to keep an orphan: add it again by label. The
    // emulator still holds it in its slot, so the new record names it again, data included.
    // The rollback restarted the control plane: until the new nodeagent reports, the library's
    // state is unknown and a mint is refused with 503 and retry_after, which a client retries.
    // A 503 naming the data plane (once "stopped (not started)": a new nodeagent reported its
    // emulator before it looked at it) is a wrong answer about an emulator that kept serving.
    const again = await waitFor(
      async () => {
        const r = await api().post('/api/cartridges', { library: library.id, label: late });
        const unknown =
          r.status === 503 && r.body?.error?.code === 'unavailable' && !r.body.error.details?.dataplane;
        return unknown ? undefined : r;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(again.status, again.text).toBe(200);
    expect(again.body.created).toEqual([expect.objectContaining({ label: late })]);
    expect(await labels()).toContain(late);
    expect((await api().get(`/api/cartridges/${late}`)).status).toBe(200);
    expect(await checksums(path.join(library.media_dir, late))).toEqual(before[late]);
  }, 400_000);
});
