import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { Cdb } from '@vtl/emulator';
import { Appliance } from './harness/appliance.js';
import { parsePrometheus } from './harness/prometheus.js';
import { LibIscsiSession, type CommandResult } from '@vtl/emulator/testing/libiscsi';

const run = promisify(execFile);
const HOST_IQN = 'iqn.2026-11.test.host:backup1';
/** 3573-TL element addresses (IBM layout). */
const SLOT_1 = 0x1000;
const DRIVE_0 = 0x0100;
const UNIT_ATTENTION = 0x06;

const senseKey = (r: CommandResult) => (r.sense.length > 2 ? r.sense[2]! & 0x0f : -1);

/** Issues TEST UNIT READY until the unit attentions a new nexus sees are consumed. */
async function settle(session: LibIscsiSession, lun: number): Promise<void> {
  await waitFor(
    async () => {
      const r = await session.command(lun, Cdb.tur());
      return r.status === 0 || senseKey(r) !== UNIT_ATTENTION;
    },
    { timeoutMs: 10_000 },
  );
}

/**
 * A backup host's view: the appliance serves the applied library over iSCSI; the host moves
 * media with the changer and writes and reads the tape; the API sees what the host did; the
 * control plane and the nodeagent restart under the host without breaking its session.
 */
describe('a backup host drives the library over iSCSI', () => {
  let app: Appliance;
  let portal: string;
  let session: LibIscsiSession;
  let libId: number;
  let serial: string;

  beforeAll(async () => {
    app = await Appliance.start();
    portal = `127.0.0.1:${app.ports.iscsi}`;
    const pool = (await app.api.get('/api/pools')).body[0];
    const lib = await app.api.post('/api/libraries', {
      name: 'hosted',
      product: '3573-TL',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 8,
      num_map: 1,
      label_prefix: 'HST',
      pool_id: pool.id,
    });
    libId = lib.body.library;
    serial = lib.body.serial;
    await app.apply();
    expect((await app.api.post('/api/cartridges', { library: libId, count: 2 })).status).toBe(200);
  });
  afterAll(async () => {
    await session?.close();
    await app?.destroy();
  });

  it('lists the changer and the drive LUNs to iscsi-ls', async () => {
    const { stdout } = await run('iscsi-ls', ['-s', '-i', HOST_IQN, `iscsi://${portal}`]);
    expect(stdout).toMatch(/Target:iqn\.2026-11\.io\.vtl:node1/);
    expect(stdout).toMatch(/Lun:0\s+Type:MEDIA_CHANGER/i);
    expect(stdout).toMatch(/Lun:1\s+Type:SEQUENTIAL_ACCESS/i);
  });

  it('shows the drive serial the API reports in the drive VPD page', async () => {
    const [target] = await LibIscsiSession.discover(portal, HOST_IQN);
    session = await LibIscsiSession.connect(portal, target!.targetName, HOST_IQN);
    await settle(session, 0);
    await settle(session, 1);
    const vpd = await session.command(1, Cdb.inquiry(255, 0x80), { dataInLength: 255 });
    const serial = vpd.data
      .subarray(4, 4 + vpd.data[3]!)
      .toString('ascii')
      .trim();
    const drives = (await app.api.get('/api/status')).body.libraries[0].drives;
    expect(serial).toBe(drives[0].serial);
    expect(drives[0].sg).toMatch(/:lun1$/);
    await waitFor(async () => (await app.api.get('/api/status')).body.fabrics.iscsi.sessions === 1);
    expect((await app.api.get('/api/status')).body.fabrics.iscsi).toEqual({
      present: true,
      portals: [portal],
      sessions: 1,
    });
    const metrics = (await app.plain.get('/metrics')).text;
    expect(metrics).toMatch(/vtl_target_sessions_active\{fabric="iscsi"\} 1/);
  });

  it("carries the host's session over CUBIC, VTL_ISCSI_TCP_CONGESTION's default", async () => {
    const filter = `( sport = :${app.ports.iscsi} )`;
    const { stdout } = await run('ss', ['-tinH', 'state', 'established', filter]);
    expect(stdout).toMatch(/\bcubic\b/);
  });

  it('moves a cartridge with MOVE MEDIUM; the API and the journal see it', async () => {
    await settle(session, 0);
    const move = await session.command(0, Cdb.moveMedium(SLOT_1, DRIVE_0));
    expect(move.status, move.sense.toString('hex')).toBe(0);
    await waitFor(
      async () => (await app.api.get('/api/status')).body.libraries[0].drives[0].loaded === 'HST001L8',
    );
    await waitFor(async () => {
      const events = (await app.api.get('/api/events/search?q=HST001L8')).body;
      return events.some((e: any) => e.kind === 'cart_moved');
    });
    // A second move into the full drive is refused with ILLEGAL REQUEST.
    const full = await session.command(0, Cdb.moveMedium(SLOT_1 + 1, DRIVE_0));
    expect(full.status).toBe(2);
    expect(senseKey(full)).toBe(0x05);
  });

  it('writes a block and a filemark, reads them back after a rewind', async () => {
    await settle(session, 1);
    const payload = Buffer.alloc(65_536, 0x5a);
    payload.write('backup set 1');
    expect((await session.command(1, Cdb.write6(payload.length), { dataOut: payload })).status).toBe(0);
    expect((await session.command(1, Cdb.writeFilemarks(1))).status).toBe(0);
    expect((await session.command(1, Cdb.rewind())).status).toBe(0);
    const read = await session.command(1, Cdb.read6(payload.length), { dataInLength: payload.length });
    expect(read.status).toBe(0);
    expect(read.data.equals(payload)).toBe(true);
    const mark = await session.command(1, Cdb.read6(payload.length), { dataInLength: payload.length });
    expect(mark.status).toBe(2);
    expect(mark.sense[2]! & 0x80).toBe(0x80); // FILEMARK bit
    await waitFor(
      async () => (await app.api.get('/api/status')).body.libraries[0].drives[0].blocks_written >= 1,
    );
    // The block's bytes crossed iSCSI both ways: the byte counters of drive 0 say so.
    const iscsiBytes = async (direction: 'read' | 'written') =>
      parsePrometheus((await app.plain.get('/metrics')).text)
        .get(`vtl_drive_iscsi_${direction}_bytes_total`)
        ?.samples.find(
          (s) => s.labels.library === serial && s.labels.name === 'hosted' && s.labels.drive === '0',
        )?.value ?? 0;
    await waitFor(async () => (await iscsiBytes('written')) >= payload.length);
    await waitFor(async () => (await iscsiBytes('read')) >= payload.length);
    const before = await iscsiBytes('written');
    expect((await session.command(1, Cdb.write6(payload.length), { dataOut: payload })).status).toBe(0);
    await waitFor(async () => (await iscsiBytes('written')) >= before + payload.length);
    await waitFor(async () => {
      const events = (await app.api.get('/api/events/search?kind=drive_activity')).body;
      return events.some((e: any) => e.subject === `drive:${libId}:0` && /writing/.test(e.detail));
    });
  });

  it('keeps the session through a nodeagent crash and an apiserver restart', async () => {
    await app.restartProcess('nodeagent/dist/main.js', 'SIGKILL');
    await app.restartProcess('apiserver/dist/server.js');
    expect((await session.command(1, Cdb.rewind())).status).toBe(0);
    const read = await session.command(1, Cdb.read6(65_536), { dataInLength: 65_536 });
    expect(read.status).toBe(0);
    expect(read.data.subarray(0, 12).toString()).toBe('backup set 1');
    // The restarted nodeagent adopts the running emulator: same process, drive still loaded.
    await waitFor(
      async () => {
        const res = await app.api.get('/api/status').catch(() => undefined);
        return res?.status === 200 && res.body.libraries[0]?.drives[0]?.loaded === 'HST001L8';
      },
      { timeoutMs: 30_000 },
    );
  });

  it('returns the cartridge to its slot with MOVE MEDIUM', async () => {
    await waitFor(async () => (await session.command(0, Cdb.moveMedium(DRIVE_0, SLOT_1))).status === 0, {
      timeoutMs: 10_000,
    });
    await waitFor(async () => (await app.api.get(`/api/cartridges/HST001L8`)).body.location === 'slot:1');
    expect((await app.api.get(`/api/libraries/${libId}/next-label`)).body.label).toBe('HST003L8');
  });
});
