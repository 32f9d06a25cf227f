import { afterEach, describe, expect, it } from 'vitest';
import { startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { errorCounters, setTapeAlertFlags } from '../testing/log-pages.js';
import { Cdb, attributeList } from '../testing/scsi-cdbs.js';
import type { HostResult, ScsiHost } from '../testing/scsi-host.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const DRIVE = 1;
const MIB = 1_048_576;
const ok = (r: HostResult) => expect(r.status, JSON.stringify(r.sense)).toBe(0);

async function withCartridge(
  libraryGen: number,
  label: string,
  mediumGen: number,
  opts: { evict?: boolean } = {},
): Promise<ScsiHost> {
  t = await startLibraryTarget([{ id: 1, generation: libraryGen }]);
  await t.mint(1, label, 1, { generation: mediumGen });
  if (opts.evict) await t.evict(1, label);
  const h = await t.host();
  await h.clearUnitAttentions(DRIVE);
  await t.dp.library(1).inventory.load(0, label);
  expect((await h.exec(DRIVE, Cdb.tur())).sense).toMatchObject({ key: 6, asc: 0x28 });
  return h;
}

/** TapeAlert flags that are set, from log page 2Eh. */
async function tapeAlerts(h: ScsiHost): Promise<number[]> {
  const r = await h.exec(DRIVE, Cdb.logSense(0x2e), { allocation: 4096 });
  ok(r);
  return setTapeAlertFlags(r.data);
}

/** Attribute id → value from READ ATTRIBUTE (ATTRIBUTE VALUES). */
async function attributes(h: ScsiHost, lun = DRIVE): Promise<Map<number, Buffer>> {
  const r = await h.exec(lun, Cdb.readAttribute(0), { allocation: 8192 });
  ok(r);
  const out = new Map<number, Buffer>();
  for (let at = 4; at < 4 + r.data.readUInt32BE(0);) {
    const length = r.data.readUInt16BE(at + 3);
    out.set(r.data.readUInt16BE(at), r.data.subarray(at + 5, at + 5 + length));
    at += 5 + length;
  }
  return out;
}

describe('LTO generation rules', () => {
  it('refuses a cartridge three generations back on an LTO-8 drive: MEDIUM ERROR, incompatible medium', async () => {
    const h = await withCartridge(8, 'OLD005L5', 5);
    for (const cdb of [Cdb.tur(), Cdb.read6(80), Cdb.write6(4)]) {
      const r = await h.exec(
        DRIVE,
        cdb,
        cdb[0] === 0x0a ? { dataOut: Buffer.from('data') } : { allocation: 80 },
      );
      expect(r.sense).toMatchObject({ key: 3, asc: 0x30, ascq: 0x00 });
    }
    expect(await tapeAlerts(h)).toEqual([0x0c]);
    expect(await tapeAlerts(h)).toEqual([]);
  });

  it('refuses a newer generation', async () => {
    const h = await withCartridge(7, 'NEW008L8', 8);
    expect((await h.exec(DRIVE, Cdb.tur())).sense).toMatchObject({ key: 3, asc: 0x30, ascq: 0x00 });
  });

  it('reads but does not write two generations back on LTO-7: DATA PROTECT, cannot write incompatible format', async () => {
    const h = await withCartridge(7, 'RO0005L5', 5);
    ok(await h.exec(DRIVE, Cdb.tur()));
    const label = await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 });
    expect(label.data.toString('ascii', 0, 4)).toBe('VOL1');
    const w = await h.exec(DRIVE, Cdb.write6(4), { dataOut: Buffer.from('data') });
    expect(w.sense).toMatchObject({ key: 7, asc: 0x30, ascq: 0x05 });
    const mode = await h.exec(DRIVE, Cdb.modeSense6(0), { allocation: 12 });
    expect(mode.data[2]! & 0x80).toBe(0x80);
    expect(mode.data[4]).toBe(0x58);
    expect(await tapeAlerts(h)).toContain(0x11);
  });

  for (const drive of [8, 9]) {
    it(`reads but does not write two generations back on LTO-${drive} too`, async () => {
      const h = await withCartridge(drive, `RO000${drive - 2}L${drive - 2}`, drive - 2);
      ok(await h.exec(DRIVE, Cdb.tur()));
      const label = await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 });
      expect(label.data.toString('ascii', 0, 4)).toBe('VOL1');
      const w = await h.exec(DRIVE, Cdb.write6(4), { dataOut: Buffer.from('data') });
      expect(w.sense).toMatchObject({ key: 7, asc: 0x30, ascq: 0x05 });
    });
  }

  it('writes the previous generation', async () => {
    const h = await withCartridge(9, 'PRV008L8', 8);
    ok(await h.exec(DRIVE, Cdb.write6(4), { dataOut: Buffer.from('data') }));
  });

  it('runs LTO-10 as ULT3580-TDA on LA media: density 62h, medium type A8h, 30 TB', async () => {
    const h = await withCartridge(10, 'TEN001LA', 10);
    ok(await h.exec(DRIVE, Cdb.tur()));
    const inq = await h.exec(DRIVE, Cdb.inquiry(), { allocation: 36 });
    expect(inq.data.toString('ascii', 16, 32).trim()).toBe('ULT3580-TDA');
    const mode = await h.exec(DRIVE, Cdb.modeSense6(0), { allocation: 12 });
    expect(mode.data[1]).toBe(0xa8);
    expect(mode.data[4]).toBe(0x62);
    // REPORT DENSITY SUPPORT: LTO-10 alone, writable, default, 30 000 000 MB.
    const rds = await h.exec(DRIVE, Cdb.reportDensity(), { allocation: 4096 });
    ok(rds);
    expect(rds.data.readUInt16BE(0)).toBe(52 + 2);
    expect(rds.data[4]).toBe(0x62);
    expect(rds.data[6]).toBe(0xa0);
    expect(rds.data.readUInt32BE(4 + 12)).toBe(30_000_000);
    ok(await h.exec(DRIVE, Cdb.write6(4), { dataOut: Buffer.from('data') }));
  });

  it('LTO-10 reads no older generation: an LTO-9 cartridge is an incompatible medium', async () => {
    const h = await withCartridge(10, 'OLD009L9', 9);
    expect((await h.exec(DRIVE, Cdb.tur())).sense).toMatchObject({ key: 3, asc: 0x30, ascq: 0x00 });
  });

  it('an LTO-9 drive refuses LTO-10 media', async () => {
    const h = await withCartridge(9, 'NEW010LA', 10);
    expect((await h.exec(DRIVE, Cdb.tur())).sense).toMatchObject({ key: 3, asc: 0x30, ascq: 0x00 });
  });
});

describe('evicted stub cartridges', () => {
  it('give a MEDIUM ERROR once, then read as a blank (unlabelled) volume that refuses writes', async () => {
    const h = await withCartridge(8, 'STB001L8', 8, { evict: true });
    expect((await h.exec(DRIVE, Cdb.tur())).sense).toMatchObject({ key: 3, asc: 0x31, ascq: 0 });
    ok(await h.exec(DRIVE, Cdb.tur()));
    const read = await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 });
    expect(read.sense).toMatchObject({ key: 8, asc: 0, ascq: 5 });
    const write = await h.exec(DRIVE, Cdb.write6(80), { dataOut: Buffer.alloc(80, 0x20) });
    expect(write.sense).toMatchObject({ key: 3, asc: 0x31 });
    // The chip survives eviction: backup software still reads the barcode.
    expect((await attributes(h)).get(0x0806)?.toString('ascii').trim()).toBe('STB001L8');
    expect(await tapeAlerts(h)).toContain(0x04);
  });
});

describe('READ ATTRIBUTE and WRITE ATTRIBUTE', () => {
  it('reports medium and device attributes and stores host attributes', async () => {
    const h = await withCartridge(8, 'MAM001L8', 8);
    const before = await attributes(h);
    expect(before.get(0x0806)?.toString('ascii').trim()).toBe('MAM001L8');
    expect(before.get(0x0400)?.toString('ascii').trim()).toBe('IBM');
    expect(before.get(0x0405)?.[0]).toBe(0x5e);
    expect(Number(before.get(0x0001)?.readBigUInt64BE(0))).toBe(Math.floor(12e12 / 2 ** 20));

    const list = attributeList([
      [0x0800, 1, Buffer.from('VTLTEST ')],
      [0x0803, 2, Buffer.from('pool A')],
    ]);
    ok(await h.exec(DRIVE, Cdb.writeAttribute(list.length), { dataOut: list }));
    const after = await attributes(h);
    expect(after.get(0x0800)?.toString()).toBe('VTLTEST ');
    expect(after.get(0x0803)?.toString()).toBe('pool A');

    const ids = await h.exec(DRIVE, Cdb.readAttribute(1, 0x0800), { allocation: 1024 });
    const listed = Array.from({ length: ids.data.readUInt32BE(0) / 2 }, (_, i) =>
      ids.data.readUInt16BE(4 + 2 * i),
    );
    expect(listed).toEqual([0x0800, 0x0803, 0x0806]);

    const readOnly = attributeList([[0x0401, 1, Buffer.from('forged')]]);
    const refused = await h.exec(DRIVE, Cdb.writeAttribute(readOnly.length), { dataOut: readOnly });
    expect(refused.sense).toMatchObject({ key: 5, asc: 0x26, fieldPointer: { inCdb: false, byte: 4 } });

    const remove = attributeList([[0x0803, 2, Buffer.alloc(0)]]);
    ok(await h.exec(DRIVE, Cdb.writeAttribute(remove.length), { dataOut: remove }));
    expect((await attributes(h)).has(0x0803)).toBe(false);
  });

  it("keeps the tape's usage: loads, the drives that loaded it, megabytes written and read", async () => {
    const h = await withCartridge(8, 'USE001L8', 8);
    const count = (a: Map<number, Buffer>, id: number) => Number(a.get(id)?.readBigUInt64BE(0));
    const device = (a: Map<number, Buffer>, id: number) =>
      a.get(id)?.toString('ascii').replace(/ +/g, ' ').trim();
    const first = await attributes(h);
    expect(count(first, 0x0003)).toBe(1);
    expect(device(first, 0x020a)).toBe('IBM 1001000001');
    expect(first.has(0x020b)).toBe(false);
    ok(await h.exec(DRIVE, Cdb.space6(3, 0)));
    for (let i = 0; i < 3; i++) ok(await h.exec(DRIVE, Cdb.write6(MIB), { dataOut: Buffer.alloc(MIB, i) }));
    ok(await h.exec(DRIVE, Cdb.rewind()));
    ok(await h.exec(DRIVE, Cdb.space6(1, 1)));
    for (let i = 0; i < 2; i++) ok(await h.exec(DRIVE, Cdb.read6(MIB), { allocation: MIB }));
    const during = await attributes(h);
    expect([0x0220, 0x0221, 0x0222, 0x0223].map((id) => count(during, id))).toEqual([3, 2, 3, 2]);

    // Into the other drive: a second load, by another drive; the first load's megabytes are history.
    const inventory = t.dp.library(1).inventory;
    await inventory.unload(0, { force: true });
    await inventory.load(1, 'USE001L8');
    await h.clearUnitAttentions(DRIVE + 1);
    const second = await attributes(h, DRIVE + 1);
    expect(count(second, 0x0003)).toBe(2);
    expect(device(second, 0x020a)).toBe('IBM 1001000002');
    expect(device(second, 0x020b)).toBe('IBM 1001000001');
    expect([0x0220, 0x0221, 0x0222, 0x0223].map((id) => count(second, id))).toEqual([3, 2, 0, 0]);
    // The drive keeps them: a host cannot write them.
    const forged = attributeList([[0x0003, 0, Buffer.alloc(8)]]);
    const refused = await h.exec(DRIVE + 1, Cdb.writeAttribute(forged.length), { dataOut: forged });
    expect(refused.sense).toMatchObject({ key: 5, asc: 0x26 });
  });

  it('needs a cartridge', async () => {
    t = await startLibraryTarget();
    const h = await t.host();
    await h.clearUnitAttentions(DRIVE);
    expect((await h.exec(DRIVE, Cdb.readAttribute(0), { allocation: 1024 })).sense).toMatchObject({
      key: 2,
      asc: 0x3a,
    });
  });
});

describe('LOG SENSE', () => {
  it('lists its pages and counts bytes and capacity', async () => {
    const h = await withCartridge(8, 'LOG001L8', 8);
    const pages = await h.exec(DRIVE, Cdb.logSense(0x00), { allocation: 64 });
    expect([...pages.data.subarray(4)]).toEqual([0x00, 0x02, 0x03, 0x0c, 0x17, 0x2e, 0x31, 0x37]);
    ok(await h.exec(DRIVE, Cdb.write6(1000), { dataOut: Buffer.alloc(1000, 7) }));
    const seq = await h.exec(DRIVE, Cdb.logSense(0x0c), { allocation: 4096 });
    expect(seq.data[0]).toBe(0x0c);
    expect(seq.data.readUInt16BE(4)).toBe(0x0000);
    expect(Number(seq.data.readBigUInt64BE(8))).toBe(1000);
    const writeErrors = errorCounters(await h.exec(DRIVE, Cdb.logSense(0x02), { allocation: 4096 }));
    expect(writeErrors).toEqual({ bytes: 1000, uncorrected: 0, corrected: [0, 0, 0, 0, 0] });
    const cap = await h.exec(DRIVE, Cdb.logSense(0x31), { allocation: 4096 });
    expect(cap.data.readUInt16BE(4)).toBe(1);
    expect(cap.data.readUInt32BE(8)).toBe(11_999_999);
    expect(cap.data.readUInt32BE(4 + 2 * 8 + 4)).toBe(12_000_000);
    ok(await h.exec(DRIVE, Cdb.logSelectReset()));
    const reset = await h.exec(DRIVE, Cdb.logSense(0x0c), { allocation: 4096 });
    expect(Number(reset.data.readBigUInt64BE(8))).toBe(0);
    expect(errorCounters(await h.exec(DRIVE, Cdb.logSense(0x02), { allocation: 4096 })).bytes).toBe(0);
    const unknown = await h.exec(DRIVE, Cdb.logSense(0x18), { allocation: 64 });
    expect(unknown.sense).toMatchObject({ key: 5, asc: 0x24, fieldPointer: { byte: 2 } });
  });

  it('raises the write-protect TapeAlert flag when a protected cartridge is written', async () => {
    const h = await withCartridge(8, 'WP0001L8', 8);
    const drive = t.devices.libraries.get(1)!.drives[0]!;
    const m = drive.medium;
    if (m.state !== 'mounted' || !m.cartridge) throw new Error('cartridge not threaded');
    await m.cartridge.setWriteProtected(true);
    const w = await h.exec(DRIVE, Cdb.write6(4), { dataOut: Buffer.from('data') });
    expect(w.sense).toMatchObject({ key: 7, asc: 0x27, ascq: 0 });
    const mode = await h.exec(DRIVE, Cdb.modeSense6(0), { allocation: 12 });
    expect(mode.data[2]! & 0x80).toBe(0x80);
    expect(await tapeAlerts(h)).toEqual([0x09]);
  });
});

describe('MODE SENSE and MODE SELECT', () => {
  it('returns the SSC pages and lets the host turn compression off', async () => {
    const h = await withCartridge(8, 'MOD001L8', 8);
    const all = await h.exec(DRIVE, Cdb.modeSense10(0x3f), { allocation: 1024 });
    ok(all);
    const codes: number[] = [];
    for (let at = 8 + all.data.readUInt16BE(6); at < all.data.length; at += 2 + all.data[at + 1]!)
      codes.push(all.data[at]!);
    expect(codes).toEqual([0x0a, 0x0f, 0x10, 0x11, 0x1d, 0x24, 0x25]);

    const dc = await h.exec(DRIVE, Cdb.modeSense6(0x0f, { dbd: true }), { allocation: 255 });
    expect(dc.data[4]).toBe(0x0f);
    expect(dc.data[6]! & 0x80).toBe(0x80);
    const page = Buffer.from(dc.data.subarray(4));
    page[2] = page[2]! & 0x7f;
    const data = Buffer.concat([Buffer.from([0, 0, 0, 0]), page]);
    ok(await h.exec(DRIVE, Cdb.modeSelect6(data.length), { dataOut: data }));
    const off = await h.exec(DRIVE, Cdb.modeSense6(0x0f, { dbd: true }), { allocation: 255 });
    expect(off.data[6]! & 0x80).toBe(0);

    const changeable = await h.exec(DRIVE, Cdb.modeSense6(0x0f, { pc: 1 }), { allocation: 255 });
    expect(changeable.data.readUIntBE(4 + 5, 3)).toBe(0xffffff);
    expect(changeable.data[12 + 2]).toBe(0x80);
    const saved = await h.exec(DRIVE, Cdb.modeSense6(0x0f, { pc: 3 }), { allocation: 255 });
    expect(saved.sense).toMatchObject({ key: 5, asc: 0x39 });
    const unknown = await h.exec(DRIVE, Cdb.modeSense6(0x26), { allocation: 255 });
    expect(unknown.sense).toMatchObject({ key: 5, asc: 0x24, fieldPointer: { byte: 2 } });
  });

  it('takes the 10-byte forms: MODE SELECT(10) sets the block length that MODE SENSE(10) reports', async () => {
    const h = await withCartridge(8, 'MOD010L8', 8);
    // Header (8 bytes, buffered mode 1, block descriptor length 8), then the descriptor.
    const header = [0, 0, 0, 0x10, 0, 0, 0, 8];
    const descriptor = (density: number, blockLength: number) => [
      density,
      0,
      0,
      0,
      0,
      (blockLength >> 16) & 0xff,
      (blockLength >> 8) & 0xff,
      blockLength & 0xff,
    ];
    const select = Buffer.from([...header, ...descriptor(0, 1024)]);
    ok(await h.exec(DRIVE, Cdb.modeSelect10(select.length), { dataOut: select }));
    const sense = await h.exec(DRIVE, Cdb.modeSense10(0), { allocation: 255 });
    ok(sense);
    expect(sense.data.readUInt16BE(6)).toBe(8);
    expect(sense.data[8]).toBe(0x5e);
    expect(sense.data.readUIntBE(8 + 5, 3)).toBe(1024);

    // A density the drive does not know: INVALID FIELD IN PARAMETER LIST at the descriptor.
    const alien = Buffer.from([...header, ...descriptor(0x99, 512)]);
    const refused = await h.exec(DRIVE, Cdb.modeSelect10(alien.length), { dataOut: alien });
    expect(refused.sense).toMatchObject({
      key: 5,
      asc: 0x26,
      ascq: 0,
      fieldPointer: { inCdb: false, byte: 8 },
    });
    // A block descriptor of the wrong length, and a buffered mode the drive does not offer.
    const long = Buffer.from([0, 0, 0, 0x10, 0, 0, 0, 16, ...descriptor(0, 512), ...descriptor(0, 512)]);
    const badLength = await h.exec(DRIVE, Cdb.modeSelect10(long.length), { dataOut: long });
    expect(badLength.sense).toMatchObject({ key: 5, asc: 0x26, fieldPointer: { byte: 6 } });
    const mode2 = Buffer.from([0, 0, 0, 0x20, 0, 0, 0, 0]);
    const badMode = await h.exec(DRIVE, Cdb.modeSelect10(mode2.length), { dataOut: mode2 });
    expect(badMode.sense).toMatchObject({ key: 5, asc: 0x26, fieldPointer: { byte: 3, bit: 6 } });
    // Nothing of the refused lists took effect.
    const after = await h.exec(DRIVE, Cdb.modeSense10(0), { allocation: 255 });
    expect(after.data.readUIntBE(8 + 5, 3)).toBe(1024);
    expect(after.data[3]! & 0x70).toBe(0x10);
  });
});

describe('LOAD UNLOAD and PREVENT ALLOW MEDIUM REMOVAL', () => {
  it('refuses UNLOAD while prevented, ejects when allowed, and LOAD threads it again', async () => {
    const h = await withCartridge(8, 'LUL001L8', 8);
    ok(await h.exec(DRIVE, Cdb.space6(3, 0)));
    ok(await h.exec(DRIVE, Cdb.preventAllow(true)));
    expect((await h.exec(DRIVE, Cdb.loadUnload(false))).sense).toMatchObject({
      key: 5,
      asc: 0x53,
      ascq: 0x02,
    });
    ok(await h.exec(DRIVE, Cdb.preventAllow(false)));
    ok(await h.exec(DRIVE, Cdb.loadUnload(false)));
    expect((await h.exec(DRIVE, Cdb.tur())).sense).toMatchObject({ key: 2, asc: 0x3a });
    ok(await h.exec(DRIVE, Cdb.loadUnload(true)));
    ok(await h.exec(DRIVE, Cdb.tur()));
    const pos = await h.exec(DRIVE, Cdb.readPosition(), { allocation: 20 });
    expect(pos.data[0]! & 0x80).toBe(0x80);
  });
});
