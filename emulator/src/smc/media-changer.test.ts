import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startLibraryTarget, type LibraryTarget } from '../testing/library-target.js';
import { Cdb } from '../testing/scsi-cdbs.js';
import type { HostResult, ScsiHost } from '../testing/scsi-host.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const CHANGER = 0;
const ok = (r: HostResult) => expect(r.status, JSON.stringify(r.sense)).toBe(0);

interface Element {
  type: number;
  address: number;
  full: boolean;
  flags: number;
  source?: number;
  volume?: string;
  identifier?: string;
}

/** Decodes READ ELEMENT STATUS data the way mtx and the ch driver walk it. */
function parseElements(data: Buffer): Element[] {
  const out: Element[] = [];
  const end = 8 + data.readUIntBE(5, 3);
  for (let page = 8; page < end;) {
    const type = data[page]!;
    const voltag = (data[page + 1]! & 0x80) !== 0;
    const size = data.readUInt16BE(page + 2);
    const bytes = data.readUIntBE(page + 5, 3);
    for (let d = page + 8; d < page + 8 + bytes; d += size) {
      const e: Element = {
        type,
        address: data.readUInt16BE(d),
        flags: data[d + 2]!,
        full: (data[d + 2]! & 0x01) !== 0,
      };
      if ((data[d + 9]! & 0x80) !== 0) e.source = data.readUInt16BE(d + 10);
      let at = d + 12;
      if (voltag) {
        const tag = data
          .toString('ascii', at, at + 32)
          .replace(/\0/g, '')
          .trim();
        if (tag) e.volume = tag;
        at += 36;
      }
      if (at + 4 <= d + size) {
        const length = data[at + 3]!;
        if (length > 0) e.identifier = data.toString('ascii', at + 4, at + 4 + length);
      }
      out.push(e);
    }
    page += 8 + bytes;
  }
  return out;
}

async function elements(h: ScsiHost, type = 0, start = 0, count = 0xffff, dvcid = true): Promise<Element[]> {
  const r = await h.exec(CHANGER, Cdb.readElementStatus(type, start, count, { voltag: true, dvcid }), {
    allocation: 0xffff,
  });
  ok(r);
  return parseElements(r.data);
}

async function library(product = '3573-TL'): Promise<ScsiHost> {
  t = await startLibraryTarget([{ id: 1, product, generation: 8, numSlots: 8, numIe: 2, drives: 2 }]);
  await t.mint(1, 'AAA001L8', 1);
  await t.mint(1, 'BBB002L8', 3);
  const h = await t.host();
  await h.clearUnitAttentions(CHANGER);
  return h;
}

describe('medium changer identity and geometry', () => {
  it('answers INQUIRY as the IBM library with its serial', async () => {
    const h = await library();
    const std = await h.exec(CHANGER, Cdb.inquiry(96), { allocation: 96 });
    expect(std.data[0]).toBe(0x08);
    expect(std.data.toString('ascii', 8, 32)).toBe('IBM     3573-TL         ');
    const serial = await h.exec(CHANGER, Cdb.inquiry(255, 0x80), { allocation: 255 });
    expect(serial.data.toString('ascii', 4)).toBe('LIB0001X1');
  });

  it('shows up in iscsi-ls (libiscsi) as a changer LUN followed by its drive LUNs', async () => {
    await library();
    await t.dp.library(1).inventory.load(1, 'AAA001L8');
    const { stdout } = await promisify(execFile)('iscsi-ls', [
      '-s',
      '-i',
      'iqn.2025-01.io.vtl.test:ls',
      `iscsi://127.0.0.1:${t.target.port}`,
    ]);
    const luns = stdout.split('\n').filter((l) => l.startsWith('Lun:'));
    expect(luns.map((l) => l.replace(/\s+/g, ' ').trim())).toEqual([
      'Lun:0 Type:MEDIA_CHANGER',
      'Lun:1 Type:SEQUENTIAL_ACCESS (No media loaded)',
      expect.stringMatching(/^Lun:2 Type:SEQUENTIAL_ACCESS(?! \(No media)/),
    ]);
  });

  it.each([
    ['3573-TL', [0x0001, 1, 0x1000, 8, 0x0010, 2, 0x0100, 2]],
    ['03584L32', [0x0001, 1, 0x0400, 8, 0x0300, 2, 0x0101, 2]],
  ])('reports the %s element address assignment and capabilities', async (product, assignment) => {
    const h = await library(product);
    const r = await h.exec(CHANGER, Cdb.modeSense6(0x3f, { dbd: true }), { allocation: 255 });
    ok(r);
    const pages = new Map<number, Buffer>();
    for (let at = 4 + r.data[3]!; at < r.data.length; at += 2 + r.data[at + 1]!) {
      pages.set(r.data[at]!, r.data.subarray(at, at + 2 + r.data[at + 1]!));
    }
    expect([...pages.keys()]).toEqual([0x1d, 0x1e, 0x1f]);
    const eaa = pages.get(0x1d)!;
    expect(Array.from({ length: 8 }, (_, i) => eaa.readUInt16BE(2 + 2 * i))).toEqual(assignment);
    expect(pages.get(0x1f)![2]).toBe(0x0e);
    expect(pages.get(0x1f)![5]! & 0x08).toBe(0x08);
    const one = await h.exec(CHANGER, Cdb.modeSense10(0x1e), { allocation: 64 });
    expect(one.data[8]).toBe(0x1e);
    const logs = await h.exec(CHANGER, Cdb.logSense(0x00), { allocation: 64 });
    expect([...logs.data.subarray(4)]).toEqual([0x00, 0x2e]);
    const alerts = await h.exec(CHANGER, Cdb.logSense(0x2e), { allocation: 4096 });
    expect(alerts.data.readUInt16BE(2)).toBe(64 * 5);
  });
});

describe('READ ELEMENT STATUS', () => {
  it('reports every element with barcodes, sources, and drive identifiers matching the drives', async () => {
    const h = await library();
    await t.dp.library(1).inventory.load(1, 'BBB002L8');
    await h.clearUnitAttentions(CHANGER);
    const all = await elements(h);
    expect(all.map((e) => [e.type, e.address])).toEqual([
      [1, 0x0001],
      [3, 0x0010],
      [3, 0x0011],
      [4, 0x0100],
      [4, 0x0101],
      ...Array.from({ length: 8 }, (_, i) => [2, 0x1000 + i]),
    ]);
    const at = (address: number) => all.find((e) => e.address === address)!;
    expect(at(0x1000)).toMatchObject({ full: true, volume: 'AAA001L8' });
    expect(at(0x1002)).toMatchObject({ full: false });
    expect(at(0x1002).volume).toBeUndefined();
    expect(at(0x0101)).toMatchObject({ full: true, volume: 'BBB002L8', source: 0x1002 });
    expect(at(0x0010).flags & 0x38).toBe(0x38);

    // Backup software pairs elements with drives through these identifiers.
    for (const [address, lun] of [
      [0x0100, 1],
      [0x0101, 2],
    ] as const) {
      const serial = await h.exec(lun, Cdb.inquiry(255, 0x80), { allocation: 255 });
      const vpd83 = await h.exec(lun, Cdb.inquiry(255, 0x83), { allocation: 255 });
      const id = at(address).identifier!;
      expect(id.endsWith(serial.data.toString('ascii', 4))).toBe(true);
      expect(vpd83.data.includes(Buffer.from(id, 'ascii'))).toBe(true);
    }
  });

  it('filters by type and start address and refuses an address past the last element', async () => {
    const h = await library();
    const slots = await elements(h, 2, 0x1002, 2, false);
    expect(slots.map((e) => [e.address, e.volume])).toEqual([
      [0x1002, 'BBB002L8'],
      [0x1003, undefined],
    ]);
    const past = await h.exec(CHANGER, Cdb.readElementStatus(2, 0x2000, 1), { allocation: 0xffff });
    expect(past.sense).toMatchObject({ key: 5, asc: 0x21, ascq: 0x01 });
    const header = await h.exec(CHANGER, Cdb.readElementStatus(0, 0, 0xffff, { voltag: true }), {
      allocation: 8,
    });
    expect(header.data.length).toBe(8);
    expect(header.data.readUInt16BE(2)).toBe(13);
  });
});

describe('MOVE MEDIUM', () => {
  it('loads a drive like the API does: the drive threads it, the move is an inventory event', async () => {
    const h = await library();
    ok(await h.exec(CHANGER, Cdb.moveMedium(0x1000, 0x0100)));
    expect(t.dp.library(1).inventory.drives()[0]).toMatchObject({ loaded: 'AAA001L8', source_slot: 1 });
    expect(t.events.find((e) => e.kind === 'cart_moved')).toMatchObject({
      subject: 'AAA001L8',
      data: { from: 'slot:1', to: 'drive:0', origin: 'host' },
    });
    await h.clearUnitAttentions(1);
    const label = await h.exec(1, Cdb.read6(80), { allocation: 80 });
    expect(label.data.toString('ascii', 0, 10)).toBe('VOL1AAA001');
    expect((await elements(h, 4)).map((e) => [e.address, e.volume, e.source])).toEqual([
      [0x0100, 'AAA001L8', 0x1000],
      [0x0101, undefined, undefined],
    ]);

    ok(await h.exec(CHANGER, Cdb.moveMedium(0x0100, 0x0011)));
    expect(t.dp.library(1).inventory.labelAt({ kind: 'ie', num: 2 })).toBe('AAA001L8');
    expect((await h.exec(1, Cdb.tur())).sense).toMatchObject({ key: 2, asc: 0x3a });
  });

  it('refuses with the SMC sense: source empty, destination full, invalid address, removal prevented', async () => {
    const h = await library();
    const expectSense = async (cdb: number[], asc: number, ascq: number) =>
      expect((await h.exec(CHANGER, cdb)).sense).toMatchObject({ key: 5, asc, ascq });
    await expectSense(Cdb.moveMedium(0x1001, 0x0100), 0x3b, 0x0e);
    await expectSense(Cdb.moveMedium(0x1000, 0x1002), 0x3b, 0x0d);
    await expectSense(Cdb.moveMedium(0x1000, 0x2000), 0x21, 0x01);
    await expectSense(Cdb.moveMedium(0x0001, 0x1001), 0x21, 0x01);
    await expectSense(Cdb.moveMedium(0x1000, 0x0100, 0x0005), 0x21, 0x01);

    ok(await h.exec(CHANGER, Cdb.moveMedium(0x1000, 0x0100)));
    await h.clearUnitAttentions(1);
    ok(await h.exec(1, Cdb.preventAllow(true)));
    await expectSense(Cdb.moveMedium(0x0100, 0x1001), 0x53, 0x02);
    expect(t.dp.library(1).inventory.drives()[0]!.loaded).toBe('AAA001L8');
    await expect(t.dp.library(1).inventory.unload(0, { force: true })).rejects.toThrow(/prevented/);
    ok(await h.exec(1, Cdb.preventAllow(false)));
    ok(await h.exec(CHANGER, Cdb.moveMedium(0x0100, 0x1001)));
    expect(t.dp.library(1).inventory.labelAt({ kind: 'storage', num: 2 })).toBe('AAA001L8');
  });
});

describe('unit attentions and element status initialisation', () => {
  it('tells other hosts the inventory changed; the mover is not told its own move', async () => {
    const a = await library();
    const b = await t.host();
    await b.clearUnitAttentions(CHANGER);
    await t.dp.library(1).inventory.load(0, 'AAA001L8');
    for (const h of [a, b]) {
      expect((await h.exec(CHANGER, Cdb.tur())).sense).toMatchObject({ key: 6, asc: 0x28, ascq: 0 });
      ok(await h.exec(CHANGER, Cdb.tur()));
    }
    ok(await b.exec(CHANGER, Cdb.moveMedium(0x1002, 0x0101)));
    ok(await b.exec(CHANGER, Cdb.tur()));
    expect((await a.exec(CHANGER, Cdb.tur())).sense).toMatchObject({ key: 6, asc: 0x28 });
    ok(await a.exec(CHANGER, Cdb.tur()));
  });

  it('accepts INITIALIZE ELEMENT STATUS with and without a range', async () => {
    const h = await library();
    ok(await h.exec(CHANGER, Cdb.initializeElementStatus()));
    ok(await h.exec(CHANGER, Cdb.initializeElementStatusWithRange(0x1000, 4)));
    const bad = await h.exec(CHANGER, Cdb.initializeElementStatusWithRange(0x5000, 1));
    expect(bad.sense).toMatchObject({ key: 5, asc: 0x21, ascq: 0x01 });
  });
});
