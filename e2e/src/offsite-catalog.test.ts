import { randomBytes } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { keys } from '@vtl/api';
import { Cdb } from '@vtl/emulator';
import { s3For } from '@vtl/offsite';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { Appliance } from './harness/appliance.js';
import { LibIscsiSession, type CommandResult } from '@vtl/emulator/testing/libiscsi';

const HOST_IQN = 'iqn.2026-11.test.host:catalog';
const SLOT = (n: number) => 0x1000 + n - 1;
const IE_1 = 0x0010;
const DRIVE_0 = 0x0100;
const BLOCK = 65_536;
const senseKey = (r: CommandResult) => (r.sense.length > 2 ? r.sense[2]! & 0x0f : -1);
const DONE = ['succeeded', 'failed', 'cancelled', 'interrupted'];

/**
 * The catalog and the bucket as an operator sees them: rebuild from a listing (with an
 * interrupted export's folder reported incomplete and deletable), import of a cartridge that is
 * no longer here into a library through its I/E slot, and the I/E-slot watcher.
 */
describe('catalog, bucket folders, import into a library and the I/E-slot watcher (real RGW)', () => {
  let rgw: TestRgw;
  let app: Appliance;
  let session: LibIscsiSession;
  let remoteId: number;
  let system: string;
  let serial: string;
  let libId: number;
  const data = Array.from({ length: 6 }, (_, i) =>
    Buffer.concat([Buffer.from(`catalog block ${i} `), randomBytes(BLOCK)]).subarray(0, BLOCK),
  );

  const api = () => app.api;
  const finished = async (id: number) => {
    await waitFor(async () => DONE.includes((await api().get(`/api/jobs/${id}`)).body.state), {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    return (await api().get(`/api/jobs/${id}`)).body;
  };
  const cartridge = async (label: string) => (await api().get(`/api/cartridges/${label}`)).body;
  async function move(from: number, to: number) {
    await waitFor(
      async () => {
        const r = await session.command(0, Cdb.moveMedium(from, to));
        return r.status === 0;
      },
      { timeoutMs: 30_000 },
    );
  }
  async function settle(lun: number) {
    await waitFor(async () => {
      const r = await session.command(lun, Cdb.tur());
      return r.status === 0 || senseKey(r) !== 0x06;
    });
  }

  beforeAll(async () => {
    rgw = await startTestRgw();
    app = await Appliance.start({ env: { VTL_EXPORT_CHUNK_BYTES: String(128 * 1024) } });
    const pool = (await api().get('/api/pools')).body[0];
    const lib = await api().post('/api/libraries', {
      name: 'catalog',
      product: '3573-TL',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 8,
      num_map: 2,
      label_prefix: 'CAT',
      pool_id: pool.id,
    });
    libId = lib.body.library;
    serial = lib.body.serial;
    await app.apply();
    expect((await api().post('/api/cartridges', { library: libId, count: 2 })).status).toBe(200);
    system = (await api().get('/api/system')).body.system_name;
    const [target] = await LibIscsiSession.discover(`127.0.0.1:${app.ports.iscsi}`, HOST_IQN);
    session = await LibIscsiSession.connect(`127.0.0.1:${app.ports.iscsi}`, target!.targetName, HOST_IQN);
    await settle(0);
    await move(SLOT(1), DRIVE_0);
    await settle(1);
    for (const b of data)
      expect((await session.command(1, Cdb.write6(BLOCK), { dataOut: b })).status).toBe(0);
    expect((await session.command(1, Cdb.writeFilemarks(1))).status).toBe(0);
    await move(DRIVE_0, SLOT(1));
    remoteId = (await api().post('/api/remotes', rgw.remoteRequest('rgw'))).body.id;
  }, 300_000);
  afterAll(async () => {
    await session?.close();
    await app?.destroy();
    await rgw?.stop();
  });

  it('rebuilds the catalog from the bucket; an interrupted folder is incomplete until deleted', async () => {
    const exp = await api().post('/api/cartridges/CAT001L8/export', { remote_id: remoteId });
    expect(exp.status).toBe(201);
    expect((await finished(exp.body.id)).state).toBe('succeeded');
    // A folder an interrupted export left: chunks, no manifest.
    const stray = `${system}/${serial}/CAT009L8/20250101T000000Z/`;
    await s3For(rgw.remote()).send(
      new PutObjectCommand({
        Bucket: rgw.bucket,
        Key: `${stray}chunk-00000.tar.zst`,
        Body: randomBytes(100),
      }),
    );
    const rebuilt = await api().post('/api/catalog/rebuild', { remote_id: remoteId });
    expect(rebuilt.status, rebuilt.text).toBe(200);
    expect(rebuilt.body).toEqual({
      complete: 1,
      incomplete: [{ system, library: serial, label: 'CAT009L8', generation: '20250101T000000Z' }],
    });
    const catalog = (await api().get(`/api/catalog?remote_id=${remoteId}`)).body;
    expect(catalog).toEqual([
      expect.objectContaining({
        remote_id: remoteId,
        system_name: system,
        library_serial: serial,
        cart_label: 'CAT001L8',
        generation: exp.body.generation,
        logical_bytes: (await cartridge('CAT001L8')).size_bytes,
      }),
    ]);

    expect(
      (await api().delete(`/api/remotes/${remoteId}/objects`, { prefix: stray.slice(0, -1) })).status,
    ).toBe(400);
    const del = await api().delete(`/api/remotes/${remoteId}/objects`, { prefix: stray });
    expect(del.body).toEqual({ deleted: 1 });
    expect((await api().post('/api/catalog/rebuild', { remote_id: remoteId })).body).toEqual({
      complete: 1,
      incomplete: [],
    });
    // Mint and next-label count catalog labels as used.
    expect((await api().get(`/api/libraries/${libId}/next-label`)).body.label).toBe('CAT003L8');
  });

  it('imports a cartridge that is no longer here into the library through its I/E slot', async () => {
    const gen = (await cartridge('CAT001L8')).last_export_gen;
    expect((await api().delete('/api/cartridges/CAT001L8', { confirm: 'CAT001L8' })).status).toBe(200);
    const missing = await api().post('/api/cartridges/CAT001L8/import', {
      remote_id: remoteId,
      generation: gen,
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/system_name/);
    const imp = await api().post('/api/cartridges/CAT001L8/import', {
      remote_id: remoteId,
      generation: gen,
      system_name: system,
    });
    expect(imp.status, imp.text).toBe(201);
    expect(imp.body).toMatchObject({ state: 'queued', target_library: libId });
    const done = await finished(imp.body.id);
    expect(done.state, done.error).toBe('succeeded');
    await waitFor(async () => (await cartridge('CAT001L8')).location === 'ie:1');
    expect(await cartridge('CAT001L8')).toMatchObject({ local_state: 'resident', last_export_gen: gen });
    const events = (await api().get('/api/events/search?kind=cart_imported')).body;
    expect(events[0].subject).toBe('CAT001L8');

    await move(IE_1, DRIVE_0);
    await settle(1);
    expect((await session.command(1, Cdb.rewind())).status).toBe(0);
    for (const b of data) {
      const r = await session.command(1, Cdb.read6(BLOCK), { dataInLength: BLOCK });
      expect(r.status, r.sense.toString('hex')).toBe(0);
      expect(r.data.equals(b)).toBe(true);
    }
    await move(DRIVE_0, SLOT(1));
  });

  it('exports a cartridge the host ejects to the I/E slot and puts it back once verified', async () => {
    expect(
      (
        await api().put('/api/settings', {
          'export.ie_watcher': 'on',
          'export.default_remote': String(remoteId),
        })
      ).status,
    ).toBe(200);
    await move(SLOT(2), IE_1);
    await waitFor(
      async () =>
        (await api().get('/api/jobs?label=CAT002L8&kind=export')).body.some(
          (j: { state: string }) => j.state === 'succeeded',
        ),
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    const [job] = (await api().get('/api/jobs?label=CAT002L8&kind=export')).body;
    expect(job.requested_by).toBe('policy:export.ie_watcher');
    await waitFor(async () => (await cartridge('CAT002L8')).location === 'slot:2');
    expect((await cartridge('CAT002L8')).last_export_gen).toBe(job.generation);
    // Back in its slot and unchanged: no second export.
    expect((await api().get('/api/jobs?label=CAT002L8')).body).toHaveLength(1);
  });

  it('rebuilds catalog records deleted from etcd, and an import refused meanwhile is accepted again', async () => {
    const gen = (await cartridge('CAT001L8')).last_export_gen;
    expect((await api().delete('/api/cartridges/CAT001L8', { confirm: 'CAT001L8' })).status).toBe(200);
    const before = (await api().get(`/api/catalog?remote_id=${remoteId}`)).body;
    expect(before.length).toBeGreaterThanOrEqual(2);
    const store = await app.connectStore();
    try {
      expect(await store.deletePrefix(keys.catalog.remote(remoteId))).toBe(before.length);
    } finally {
      await store.close();
    }
    expect((await api().get(`/api/catalog?remote_id=${remoteId}`)).body).toEqual([]);
    const body = { remote_id: remoteId, generation: gen, system_name: system };
    const refused = await api().post('/api/cartridges/CAT001L8/import', body);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/not in the catalog.*rebuild/);
    expect((await api().get('/api/jobs?label=CAT001L8&state=queued')).body).toEqual([]);

    const rebuilt = await api().post('/api/catalog/rebuild', { remote_id: remoteId });
    expect(rebuilt.status, rebuilt.text).toBe(200);
    expect(rebuilt.body).toEqual({ complete: before.length, incomplete: [] });
    const after = (await api().get(`/api/catalog?remote_id=${remoteId}`)).body;
    const ids = (entries: { cart_label: string; generation: string }[]) =>
      entries.map((e) => `${e.cart_label}/${e.generation}`).sort();
    expect(ids(after)).toEqual(ids(before));

    const imp = await api().post('/api/cartridges/CAT001L8/import', body);
    expect(imp.status, imp.text).toBe(201);
    const done = await finished(imp.body.id);
    expect(done.state, done.error).toBe('succeeded');
    await waitFor(async () => (await cartridge('CAT001L8')).location === 'ie:1');
  }, 300_000);
});
