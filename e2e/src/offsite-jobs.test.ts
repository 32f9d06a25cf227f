import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { Cdb } from '@vtl/emulator';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { s3For } from '@vtl/offsite';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { Appliance } from './harness/appliance.js';
import { LibIscsiSession, type CommandResult } from '@vtl/emulator/testing/libiscsi';

const HOST_IQN = 'iqn.2026-11.test.host:offsite';
const SLOT = (n: number) => 0x1000 + n - 1;
const DRIVE_0 = 0x0100;
const BLOCK = 65_536;
/** Small chunks: the kill and the outage land half way through an export. */
const CHUNK_BYTES = 64 * 1024;
const senseKey = (r: CommandResult) => (r.sense.length > 2 ? r.sense[2]! & 0x0f : -1);
const JOB_DONE = ['succeeded', 'failed', 'cancelled', 'interrupted'];

/**
 * Offsite copies end to end against a real Ceph RGW: a host writes a cartridge over iSCSI; it is
 * exported, evicted (the host then sees a media error), imported and read back byte-identical;
 * an export survives a nodeagent kill without re-sending verified chunks; an S3 outage fails a
 * job with a clear reason and a retry resumes it; a corrupted chunk stops evict and import.
 */
describe('export, evict and import against a real S3 (Ceph RGW)', () => {
  let rgw: TestRgw;
  let app: Appliance;
  let session: LibIscsiSession;
  let remoteId: number;
  const written = new Map<string, Buffer[]>();

  const api = () => app.api;
  const job = async (id: number) => (await api().get(`/api/jobs/${id}`)).body;
  const finished = async (id: number, timeoutMs = 120_000) => {
    await waitFor(async () => JOB_DONE.includes((await job(id)).state), { timeoutMs, intervalMs: 200 });
    return job(id);
  };
  const cartridge = async (label: string) => (await api().get(`/api/cartridges/${label}`)).body;

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
  /** The host writes `blocks` distinct blocks and a filemark to the cartridge in slot `slot`. */
  async function hostWrites(label: string, slot: number, blocks: number) {
    await move(SLOT(slot), DRIVE_0);
    await settle(1);
    const data = Array.from({ length: blocks }, (_, i) =>
      Buffer.concat([Buffer.from(`${label} block ${i} `), randomBytes(BLOCK)]).subarray(0, BLOCK),
    );
    expect((await session.command(1, Cdb.rewind())).status).toBe(0);
    for (const b of data)
      expect((await session.command(1, Cdb.write6(b.length), { dataOut: b })).status).toBe(0);
    expect((await session.command(1, Cdb.writeFilemarks(1))).status).toBe(0);
    written.set(label, data);
    await move(DRIVE_0, SLOT(slot));
  }
  /** The host reads the cartridge back and compares every block. */
  async function hostReadsBack(label: string, slot: number) {
    await move(SLOT(slot), DRIVE_0);
    try {
      await settle(1);
      expect((await session.command(1, Cdb.rewind())).status).toBe(0);
      for (const [i, b] of written.get(label)!.entries()) {
        const r = await session.command(1, Cdb.read6(BLOCK), { dataInLength: BLOCK });
        expect(r.status, `block ${i}: sense ${r.sense.toString('hex')}`).toBe(0);
        expect(r.data.equals(b), `block ${i}`).toBe(true);
      }
    } finally {
      await move(DRIVE_0, SLOT(slot));
    }
  }
  const post = async (path: string, body: object) => {
    const res = await api().post(path, body);
    expect(res.status, res.text).toBe(201);
    return res.body;
  };

  beforeAll(async () => {
    rgw = await startTestRgw();
    app = await Appliance.start({ env: { VTL_EXPORT_CHUNK_BYTES: String(CHUNK_BYTES) } });
    const pool = (await api().get('/api/pools')).body[0];
    const lib = await api().post('/api/libraries', {
      name: 'offsite',
      product: '3573-TL',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 8,
      num_map: 2,
      label_prefix: 'OFS',
      pool_id: pool.id,
    });
    expect(lib.status).toBe(201);
    await app.apply();
    expect((await api().post('/api/cartridges', { library: lib.body.library, count: 3 })).status).toBe(200);
    const [target] = await LibIscsiSession.discover(`127.0.0.1:${app.ports.iscsi}`, HOST_IQN);
    session = await LibIscsiSession.connect(`127.0.0.1:${app.ports.iscsi}`, target!.targetName, HOST_IQN);
    await hostWrites('OFS001L8', 1, 24);
    await hostWrites('OFS002L8', 2, 96);
    await hostWrites('OFS003L8', 3, 64);
    const remote = await api().post('/api/remotes', rgw.remoteRequest('rgw', { prefix: 'e2e' }));
    expect(remote.status, remote.text).toBe(201);
    remoteId = remote.body.id;
  }, 300_000);
  afterAll(async () => {
    await session?.close();
    await app?.destroy();
    await rgw?.stop();
  });

  it('tests the remote: ok, recorded on the remote', async () => {
    const res = await api().post(`/api/remotes/${remoteId}/test`, {});
    expect(res.status).toBe(200);
    expect(res.body.ok, res.body.detail).toBe(true);
    expect((await api().get(`/api/remotes/${remoteId}`)).body).toMatchObject({
      last_test_ok: true,
      has_secret: true,
    });
  });

  it('exports a cartridge the host wrote: manifest, topology, system file and catalog entry', async () => {
    const created = await post('/api/cartridges/OFS001L8/export', { remote_id: remoteId });
    expect(created).toMatchObject({ state: 'detected', bytes_done: 0, chunks_done: 0 });
    const done = await finished(created.id);
    expect(done.state, done.error).toBe('succeeded');
    expect(done.chunks_done).toBeGreaterThan(1);
    const system = (await api().get('/api/system')).body.system_name;
    const serial = (await api().get('/api/libraries')).body[0].serial;
    const keys = (await api().get(`/api/remotes/${remoteId}/objects`)).body.objects.map(
      (o: { key: string }) => o.key,
    );
    expect(keys).toContain(`${system}/${serial}/OFS001L8/${done.generation}/manifest.json`);
    expect(keys).toContain(`${system}/${serial}/topology.json`);
    expect(keys).toContain(`${system}/.vtl-system.json`);
    expect(keys).toContain(`${system}/${serial}/OFS001L8/${done.generation}/chunk-00000.tar.zst`);
    const catalog = (await api().get(`/api/catalog?remote_id=${remoteId}`)).body;
    expect(catalog).toContainEqual(
      expect.objectContaining({ cart_label: 'OFS001L8', generation: done.generation, system_name: system }),
    );
    expect((await cartridge('OFS001L8')).last_export_gen).toBe(done.generation);
    const events = (await api().get('/api/events/search?kind=job_update&limit=5000')).body;
    expect(
      events.filter((e: { subject: string }) => e.subject === `job:${created.id}`).length,
    ).toBeGreaterThan(3);
    const metrics = (await app.plain.get('/metrics')).text;
    expect(metrics).toMatch(/vtl_jobs_total\{kind="export",outcome="succeeded"\} [1-9]/);
  });

  it('evicts it to a stub the host sees as a media error, then imports it back byte-identical', async () => {
    const gen = (await cartridge('OFS001L8')).last_export_gen;
    const evict = await finished((await post('/api/cartridges/OFS001L8/evict', { remote_id: remoteId })).id);
    expect(evict.state, evict.error).toBe('succeeded');
    await waitFor(async () => (await cartridge('OFS001L8')).local_state === 'evicted');
    expect((await app.plain.get('/metrics')).text).toMatch(
      /vtl_carts\{library="[^"]+",local_state="evicted"\} 1/,
    );

    await move(SLOT(1), DRIVE_0);
    await waitFor(async () => senseKey(await session.command(1, Cdb.tur())) === 0x03);
    await move(DRIVE_0, SLOT(1));

    const imported = await finished(
      (await post('/api/cartridges/OFS001L8/import', { remote_id: remoteId, generation: gen })).id,
    );
    expect(imported.state, imported.error).toBe('succeeded');
    await waitFor(async () => (await cartridge('OFS001L8')).local_state === 'resident');
    await hostReadsBack('OFS001L8', 1);
  });

  it('resumes an export after a nodeagent kill without sending verified chunks again', async () => {
    const created = await post('/api/cartridges/OFS002L8/export', { remote_id: remoteId });
    await waitFor(async () => (await job(created.id)).chunks_done >= 3, {
      timeoutMs: 120_000,
      intervalMs: 50,
    });
    await app.restartProcess('nodeagent/dist/main.js', 'SIGKILL');
    const atKill = (await job(created.id)).chunks_done;
    const done = await finished(created.id, 240_000);
    expect(done.state, done.error).toBe('succeeded');
    // Progress as the journal recorded it, oldest first: each verified chunk is announced once
    // and the count never starts over, so no chunk verified before the kill was sent again.
    const events = (await api().get(`/api/events/search?kind=job_update&limit=5000`)).body as Array<{
      subject: string;
      detail: string;
    }>;
    const counts = events
      .filter((e) => e.subject === `job:${created.id}`)
      .reverse()
      .map((e) => /uploaded (\d+) chunks/.exec(e.detail)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number);
    expect(counts.length).toBeGreaterThan(3);
    for (let k = 1; k < counts.length; k++) expect(counts[k]).toBeGreaterThan(counts[k - 1]!);
    expect(counts.at(-1)).toBe(done.chunks_done);
    // The kill landed half way: chunks were still to come, and they came after the restart.
    expect(atKill).toBeLessThan(done.chunks_done);
    expect(done.attempts).toBe(1);
  });

  it('fails an export with a clear reason while S3 is down; a retry resumes it', async () => {
    const created = await post('/api/cartridges/OFS003L8/export', { remote_id: remoteId });
    await waitFor(async () => (await job(created.id)).chunks_done >= 2, {
      timeoutMs: 120_000,
      intervalMs: 50,
    });
    await rgw.stopGateway();
    const failed = await finished(created.id, 240_000);
    expect(failed.state).toBe('failed');
    expect(failed.error).toMatch(/unreachable.*retry/i);
    const before = failed.chunks_done;
    expect(before).toBeGreaterThanOrEqual(2);
    await rgw.startGateway();
    const retried = await api().post(`/api/jobs/${created.id}/retry`, {});
    expect(retried.status).toBe(200);
    const done = await finished(created.id);
    expect(done.state, done.error).toBe('succeeded');
    expect(done.attempts).toBe(2);
  });

  it('marks a running export interrupted on an immediate control-plane restart; a retry finishes it', async () => {
    const created = await post('/api/cartridges/OFS002L8/export', { remote_id: remoteId });
    await waitFor(async () => (await job(created.id)).chunks_done >= 2, {
      timeoutMs: 120_000,
      intervalMs: 50,
    });
    const restart = await api().post('/api/system/restart', { confirm: 'restart', mode: 'immediate' });
    expect(restart.status, restart.text).toBe(200);
    // The apiserver restarts too: poll through the gap.
    const state = async () =>
      (
        await api()
          .get(`/api/jobs/${created.id}`)
          .catch(() => undefined)
      )?.body?.state;
    await waitFor(async () => (await state()) === 'interrupted', { timeoutMs: 60_000, intervalMs: 250 });
    const interrupted = await job(created.id);
    expect(interrupted.error).toMatch(/control-plane restart.*retry/);
    expect((await api().get('/api/system')).body.active_jobs).toBe(0);
    expect((await api().post(`/api/jobs/${created.id}/retry`, {})).status).toBe(200);
    const done = await finished(created.id);
    expect(done.state, done.error).toBe('succeeded');
    expect(done.attempts).toBe(2);
  });

  it('refuses to evict against a corrupted chunk, and an import of it leaves the stub untouched', async () => {
    // OFS003L8 was exported above; corrupt one chunk of that generation in the bucket.
    const gen = (await cartridge('OFS003L8')).last_export_gen;
    const system = (await api().get('/api/system')).body.system_name;
    const serial = (await api().get('/api/libraries')).body[0].serial;
    const s3 = s3For(rgw.remote());
    const corrupt = (generation: string, label: string) =>
      s3.send(
        new PutObjectCommand({
          Bucket: rgw.bucket,
          Key: `e2e/${system}/${serial}/${label}/${generation}/chunk-00000.tar.zst`,
          Body: randomBytes(512),
        }),
      );
    await corrupt(gen, 'OFS003L8');
    const evict = await finished((await post('/api/cartridges/OFS003L8/evict', { remote_id: remoteId })).id);
    expect(evict.state).toBe('failed');
    expect(evict.error).toMatch(/not evicted/);
    expect((await cartridge('OFS003L8')).local_state).toBe('resident');
    await hostReadsBack('OFS003L8', 3);

    // A good copy of OFS002L8 lets it become a stub; then its chunk goes bad.
    const gen2 = (await cartridge('OFS002L8')).last_export_gen;
    expect(
      (await finished((await post('/api/cartridges/OFS002L8/evict', { remote_id: remoteId })).id)).state,
    ).toBe('succeeded');
    await waitFor(async () => (await cartridge('OFS002L8')).local_state === 'evicted');
    await corrupt(gen2, 'OFS002L8');
    const imp = await finished(
      (await post('/api/cartridges/OFS002L8/import', { remote_id: remoteId, generation: gen2 })).id,
    );
    expect(imp.state).toBe('failed');
    expect(imp.error).toMatch(/does not verify/);
    expect((await cartridge('OFS002L8')).local_state).toBe('evicted');
  });
});
