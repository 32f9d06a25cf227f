import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cartridgeDir } from '../media/layout.js';
import { crc32c } from '../util/crc32c.js';
import { startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { Cdb, attributeList, attributeValue } from '../testing/scsi-cdbs.js';
import type { HostResult, ScsiHost } from '../testing/scsi-host.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const DRIVE = 1;
const ok = (r: HostResult) => expect(r.status, JSON.stringify(r.sense)).toBe(0);
const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return [...b];
};

/** LOCATE(16) to `block`, changing to `partition` when given. */
const locate16 = (block: number, partition?: number) => [
  0x92,
  partition === undefined ? 0 : 0x02,
  0,
  partition ?? 0,
  ...u64(block),
  0,
  0,
  0,
  0,
];
const formatMedium = (format: number) => [0x04, 0, format, 0, 0, 0];
const setCapacity = (proportion: number) => [0x0b, 0, 0, proportion >> 8, proportion & 0xff, 0];
const modeSense10 = (page: number, subpage = 0, alloc = 1024) => [
  0x5a,
  0,
  page,
  subpage,
  0,
  0,
  0,
  alloc >> 8,
  alloc & 0xff,
  0,
];
const readAttr = (partition: number, first = 0) => [
  0x8c,
  0,
  0,
  0,
  0,
  0,
  0,
  partition,
  first >> 8,
  first & 0xff,
  0,
  0,
  0x20,
  0,
  0,
  0,
];
const writeAttr = (partition: number, length: number) => [
  0x8d,
  1,
  0,
  0,
  0,
  0,
  0,
  partition,
  0,
  0,
  0,
  0,
  length >> 8,
  length & 0xff,
  0,
  0,
];

async function withCartridge(gen: number, label: string): Promise<ScsiHost> {
  t = await startLibraryTarget([{ id: 1, generation: gen }]);
  await t.mint(1, label, 1, { generation: gen });
  const h = await t.host();
  await h.clearUnitAttentions(DRIVE);
  await t.dp.library(1).inventory.load(0, label);
  await h.exec(DRIVE, Cdb.tur());
  return h;
}

/** MODE SENSE(10) of page 11h with block descriptor: the page starts at byte 16. */
async function partitionPage(h: ScsiHost): Promise<Buffer> {
  const r = await h.exec(DRIVE, modeSense10(0x11), { allocation: 1024 });
  ok(r);
  return r.data;
}

/** MODE SELECT(10) of a page 11h built as LTFS builds it from MODE SENSE(10). */
async function selectPartitions(h: ScsiHost, edit: (page: Buffer) => void): Promise<HostResult> {
  const data = Buffer.from(await partitionPage(h));
  data[0] = 0;
  data[1] = 0;
  edit(data.subarray(16));
  return h.exec(DRIVE, Cdb.modeSelect10(data.length), { dataOut: data });
}

/** Two partitions as mkltfs asks: IDP, units of 10^9 bytes, partition 1 one unit, partition 0 the rest. */
const ltfsLayout = (p: Buffer) => {
  p[3] = 1;
  p[4] = 0x20 | (p[4]! & 0x1f);
  p[6] = 0x09;
  p.writeUInt16BE(0xffff, 8);
  p.writeUInt16BE(1, 10);
};

async function position(h: ScsiHost): Promise<{ partition: number; block: number; filemarks: number }> {
  const r = await h.exec(DRIVE, Cdb.readPosition(0x06), { allocation: 32 });
  ok(r);
  return {
    partition: r.data.readUInt32BE(4),
    block: Number(r.data.readBigUInt64BE(8)),
    filemarks: Number(r.data.readBigUInt64BE(16)),
  };
}

/** Partition number → MB of one page 17h list parameter. */
function volumeStat(page: Buffer, code: number): number[] {
  for (let at = 4; at < page.length; at += 4 + page[at + 3]!) {
    if (page.readUInt16BE(at) !== code) continue;
    const out: number[] = [];
    const body = page.subarray(at + 4, at + 4 + page[at + 3]!);
    for (let r = 0; r < body.length; r += body[r]! + 1)
      out[body.readUInt16BE(r + 2)] = body.readUInt32BE(r + 4);
    return out;
  }
  return [];
}

describe('partitions (LTO-5 and later)', () => {
  it('reports one partition, up to three more possible on LTO-8, partitioned on format', async () => {
    const h = await withCartridge(8, 'PAR001L8');
    const p = (await partitionPage(h)).subarray(16);
    expect(p[0]).toBe(0x11);
    expect(p[1]).toBe(0x0e);
    expect(p[2]).toBe(3);
    expect(p[3]).toBe(0);
    expect(p[4]! & 0x04).toBe(0x04);
    expect(p[6]).toBe(9);
    expect(p.readUInt16BE(8)).toBe(12_000);
  });

  it('formats two partitions as LTFS asks, each with its own blocks, end of data, position and capacity', async () => {
    const h = await withCartridge(8, 'PAR002L8');
    ok(await selectPartitions(h, ltfsLayout));
    ok(await h.exec(DRIVE, formatMedium(1)));
    const p = (await partitionPage(h)).subarray(16);
    expect(p[3]).toBe(1);
    // Partition 1 rounds up to the minimum partition (1% of 12 TB); partition 0 takes the rest.
    expect([p.readUInt16BE(8), p.readUInt16BE(10)]).toEqual([11_880, 120]);
    expect(await position(h)).toEqual({ partition: 0, block: 0, filemarks: 0 });
    // Formatted tapes are blank: the minted label is gone.
    expect((await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 })).sense).toMatchObject({
      key: 8,
      asc: 0,
      ascq: 5,
    });

    ok(await h.exec(DRIVE, Cdb.write6(5), { dataOut: Buffer.from('p0-b0') }));
    ok(await h.exec(DRIVE, Cdb.writeFilemarks(1)));
    ok(await h.exec(DRIVE, locate16(0, 1)));
    expect(await position(h)).toEqual({ partition: 1, block: 0, filemarks: 0 });
    for (const b of ['p1-b0', 'p1-b1']) ok(await h.exec(DRIVE, Cdb.write6(5), { dataOut: Buffer.from(b) }));
    ok(await h.exec(DRIVE, Cdb.writeFilemarks(1)));
    // SPACE to end of data stays in the partition.
    ok(await h.exec(DRIVE, locate16(0)));
    ok(await h.exec(DRIVE, Cdb.space16(3, 0)));
    expect(await position(h)).toEqual({ partition: 1, block: 3, filemarks: 1 });
    // The short and extended forms carry the partition too.
    expect((await h.exec(DRIVE, Cdb.readPosition(0), { allocation: 20 })).data[1]).toBe(1);
    expect((await h.exec(DRIVE, Cdb.readPosition(0x08, 32), { allocation: 32 })).data[1]).toBe(1);
    // LTFS finds end of data with a LOCATE far beyond it: BLANK CHECK, at end of data.
    ok(await h.exec(DRIVE, locate16(0, 0)));
    const far = await h.exec(DRIVE, locate16(0xffffffff));
    expect(far.sense).toMatchObject({ key: 8, asc: 0, ascq: 5 });
    expect(await position(h)).toEqual({ partition: 0, block: 2, filemarks: 1 });
    ok(await h.exec(DRIVE, locate16(0)));
    expect((await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 })).data.toString()).toBe('p0-b0');

    const stats = await h.exec(DRIVE, Cdb.logSense(0x17), { allocation: 4096 });
    ok(stats);
    expect(volumeStat(stats.data, 0x0202)).toEqual([11_880_000, 120_000]);
    expect(volumeStat(stats.data, 0x0204)).toEqual([11_880_000 - 1, 120_000 - 1]);
    const cap = await h.exec(DRIVE, Cdb.logSense(0x31), { allocation: 4096 });
    expect(cap.data.readUInt32BE(4 + 8 * 3 + 4)).toBe(120_000);

    // Unload and load: the layout and every partition's blocks are kept.
    ok(await h.exec(DRIVE, Cdb.loadUnload(false)));
    ok(await h.exec(DRIVE, Cdb.loadUnload(true)));
    ok(await h.exec(DRIVE, locate16(1, 1)));
    expect((await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 })).data.toString()).toBe('p1-b1');
    const dir = cartridgeDir(t.dir + '/lib1', 'PAR002L8');
    expect((await readdir(dir)).sort()).toEqual([
      'data',
      'data.p1',
      'index',
      'index.p1',
      'mam.json',
      'meta.json',
    ]);
    expect(JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8'))).toMatchObject({
      format: 2,
      partitions: [11_880_000_000_000, 120_000_000_000],
    });

    // FORMAT MEDIUM with the default format: one partition again, meta.json back to format 1.
    ok(await h.exec(DRIVE, locate16(0, 0)));
    ok(await h.exec(DRIVE, formatMedium(0)));
    expect((await partitionPage(h))[16 + 3]).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')).format).toBe(1);
    expect((await readdir(dir)).sort()).toEqual(['data', 'index', 'mam.json', 'meta.json']);
  });

  it('keeps host attributes and capacities per partition in the cartridge memory', async () => {
    const h = await withCartridge(8, 'PAR003L8');
    ok(await selectPartitions(h, ltfsLayout));
    ok(await h.exec(DRIVE, formatMedium(1)));
    const vci = (tag: string) => attributeList([[0x080c, 0, Buffer.from(tag)]]);
    ok(await h.exec(DRIVE, writeAttr(0, vci('zero').length), { dataOut: vci('zero') }));
    ok(await h.exec(DRIVE, writeAttr(1, vci('one!').length), { dataOut: vci('one!') }));
    const p0 = await h.exec(DRIVE, readAttr(0), { allocation: 8192 });
    const p1 = await h.exec(DRIVE, readAttr(1), { allocation: 8192 });
    expect(attributeValue(p0.data, 0x080c)?.toString()).toBe('zero');
    expect(attributeValue(p1.data, 0x080c)?.toString()).toBe('one!');
    // Maximum capacity per partition, in MiB.
    expect(Number(attributeValue(p1.data, 0x0001)!.readBigUInt64BE())).toBe(Math.floor(120e9 / 1_048_576));
    expect(attributeValue(p1.data, 0x0806)?.toString().trim()).toBe('PAR003L8');
    const list = await h.exec(DRIVE, [0x8c, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0], {
      allocation: 4096,
    });
    expect([...list.data.subarray(2, 4)]).toEqual([0, 2]);
    expect((await h.exec(DRIVE, readAttr(2), { allocation: 8192 })).sense).toMatchObject({
      key: 5,
      asc: 0x24,
    });
  });

  it('refuses what the drive cannot do, each with its sense', async () => {
    const h = await withCartridge(8, 'PAR004L8');
    // Four additional partitions: more than LTO-8 makes.
    expect((await selectPartitions(h, (p) => void (p[3] = 4))).sense).toMatchObject({ key: 5, asc: 0x26 });
    // FDP and IDP together.
    expect((await selectPartitions(h, (p) => ((p[3] = 1), (p[4] = 0xa0 | 0x18)))).sense).toMatchObject({
      key: 5,
      asc: 0x26,
    });
    // Partitions that do not fit the tape.
    const tooBig = await selectPartitions(h, (p) => {
      ltfsLayout(p);
      p.writeUInt16BE(0x7000, 8);
      p.writeUInt16BE(0x7000, 10);
    });
    expect(tooBig.sense).toMatchObject({ key: 5, asc: 0x26 });
    // FORMAT MEDIUM away from BOP of partition 0: POSITION PAST BEGINNING OF MEDIUM.
    await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 });
    expect((await h.exec(DRIVE, formatMedium(1))).sense).toMatchObject({ key: 5, asc: 0x3b, ascq: 0x0c });
    expect((await h.exec(DRIVE, formatMedium(3))).sense).toMatchObject({ key: 5, asc: 0x24 });
    // LOCATE into a partition the tape does not have.
    expect((await h.exec(DRIVE, locate16(0, 1))).sense).toMatchObject({ key: 5, asc: 0x24 });
    // A write-protected cartridge is not formatted: DATA PROTECT, WRITE PROTECTED.
    ok(await h.exec(DRIVE, Cdb.rewind()));
    const m = t.devices.libraries.get(1)!.drives[0]!.medium;
    if (m.state !== 'mounted' || !m.cartridge) throw new Error('cartridge not threaded');
    await m.cartridge.setWriteProtected(true);
    expect((await h.exec(DRIVE, formatMedium(0))).sense).toMatchObject({ key: 7, asc: 0x27 });
    expect((await h.exec(DRIVE, setCapacity(0x8000))).sense).toMatchObject({ key: 7, asc: 0x27 });
  });

  it('refuses a second partition on LTO-4, which has none to give', async () => {
    const h = await withCartridge(4, 'PAR005L4');
    const p = (await partitionPage(h)).subarray(16);
    expect(p[2]).toBe(0);
    expect((await selectPartitions(h, (pg) => void (pg[3] = 1))).sense).toMatchObject({ key: 5, asc: 0x26 });
  });

  it('SET CAPACITY scales the tape and leaves it one empty partition', async () => {
    const h = await withCartridge(8, 'PAR006L8');
    ok(await h.exec(DRIVE, setCapacity(0x8000)));
    const stats = await h.exec(DRIVE, Cdb.logSense(0x17), { allocation: 4096 });
    expect(volumeStat(stats.data, 0x0202)).toEqual([6_000_091]);
    ok(await h.exec(DRIVE, setCapacity(0xffff)));
    expect(volumeStat((await h.exec(DRIVE, Cdb.logSense(0x17), { allocation: 4096 })).data, 0x0202)).toEqual([
      12_000_000,
    ]);
  });
});

describe('the pages LTFS reads', () => {
  it('offers control data protection, device configuration extension and IBM pages 24h and 25h', async () => {
    const h = await withCartridge(8, 'PAG001L8');
    const lbp = await h.exec(DRIVE, modeSense10(0x0a, 0xf0, 48), { allocation: 48 });
    ok(lbp);
    expect([lbp.data[16], lbp.data[17]]).toEqual([0x4a, 0xf0]);
    // LTFS turns CRC32C protection on the way it does: the page back with method, length, LBP_W/R.
    const page = Buffer.from(lbp.data);
    page[0] = page[1] = 0;
    page[20] = 0x02;
    page[21] = 0x04;
    page[22] = 0xc0;
    ok(await h.exec(DRIVE, Cdb.modeSelect10(page.length), { dataOut: page }));
    const after = await h.exec(DRIVE, modeSense10(0x0a, 0xf0, 48), { allocation: 48 });
    expect([after.data[20], after.data[21], after.data[22]]).toEqual([0x02, 0x04, 0xc0]);
    // Blocks now carry their CRC32C (least significant byte first): a good one is written and
    // read back with it, a bad one is refused with LOGICAL BLOCK GUARD CHECK FAILED.
    const payload = Buffer.from('protected block');
    const crc = Buffer.alloc(4);
    crc.writeUInt32LE(crc32c(payload));
    const good = Buffer.concat([payload, crc]);
    ok(await h.exec(DRIVE, Cdb.write6(good.length), { dataOut: good }));
    const bad = Buffer.from(good);
    bad[0] = bad[0]! ^ 1;
    expect((await h.exec(DRIVE, Cdb.write6(bad.length), { dataOut: bad })).sense).toMatchObject({
      key: 0x0b,
      asc: 0x10,
      ascq: 0x01,
    });
    ok(await h.exec(DRIVE, Cdb.space6(0, -1)));
    expect((await h.exec(DRIVE, Cdb.read6(80), { allocation: 80 })).data).toEqual(good);
    const ext = await h.exec(DRIVE, modeSense10(0x10, 0x01, 48), { allocation: 48 });
    ok(ext);
    expect(ext.data.length).toBe(48);
    for (const code of [0x24, 0x25]) {
      const r = await h.exec(DRIVE, modeSense10(code), { allocation: 255 });
      ok(r);
      expect(r.data[16]).toBe(code);
    }
    // A subpage the drive does not have.
    expect((await h.exec(DRIVE, modeSense10(0x0a, 0x01))).sense).toMatchObject({ key: 5, asc: 0x24 });
    // READ BUFFER describes its dump buffer.
    const rb = await h.exec(DRIVE, [0x3c, 0x03, 0, 0, 0, 0, 0, 0, 4, 0], { allocation: 4 });
    ok(rb);
    expect(rb.data.length).toBe(4);
  });

  it('refuses CRC32C protection on LTO-5, which only has Reed-Solomon CRC', async () => {
    const h = await withCartridge(5, 'PAG002L5');
    const lbp = await h.exec(DRIVE, modeSense10(0x0a, 0xf0, 48), { allocation: 48 });
    const page = Buffer.from(lbp.data);
    page[0] = page[1] = 0;
    page[20] = 0x02;
    page[21] = 0x04;
    expect((await h.exec(DRIVE, Cdb.modeSelect10(page.length), { dataOut: page })).sense).toMatchObject({
      key: 5,
      asc: 0x26,
    });
    page[20] = 0x01;
    ok(await h.exec(DRIVE, Cdb.modeSelect10(page.length), { dataOut: page }));
  });
});
