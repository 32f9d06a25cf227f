import { afterEach, describe, expect, it } from 'vitest';
import { cartridgeDir } from '../media/layout.js';
import { readMam } from '../media/mam.js';
import { startWithCartridge, type LibraryTarget } from '../testing/library-target.js';
import { Cdb, attributeList, attributeValue } from '../testing/scsi-cdbs.js';
import type { HostResult, ScsiHost } from '../testing/scsi-host.js';

let t: LibraryTarget;
afterEach(async () => {
  await t?.stop();
});

const DRIVE = 1;
const LABEL = 'VCR001L8';
const VCR = 0x0009;
const COHERENCY = 0x080c;
const ok = (r: HostResult) => expect(r.status, JSON.stringify(r.sense)).toBe(0);

/** LOCATE(16) to `block` of `partition` (CP set). */
const locate = (partition: number, block: number) => {
  const cdb = Buffer.from(Cdb.locate16(block));
  cdb[1] = 0x02;
  cdb[3] = partition;
  return [...cdb];
};

/** The volume change reference as LTFS reads it: the 4-byte value of attribute 0009h. */
async function vcr(h: ScsiHost): Promise<number> {
  const r = await h.exec(DRIVE, Cdb.readAttribute(0, VCR), { allocation: 8192 });
  ok(r);
  const value = attributeValue(r.data, VCR);
  expect(value?.length).toBe(4);
  const v = value!.readUInt32BE(0);
  // 0 and FFFFFFFFh make LTFS distrust its coherency data and check the whole medium.
  expect(v).not.toBe(0);
  expect(v).not.toBe(0xffffffff);
  return v;
}

/** Volume coherency information (080Ch) laid out as LTFS writes it after an index. */
function coherency(reference: number, generation: number, block: number): Buffer {
  const v = Buffer.alloc(70);
  v[0] = 8;
  v.writeBigUInt64BE(BigInt(reference), 1);
  v.writeBigUInt64BE(BigInt(generation), 9);
  v.writeBigUInt64BE(BigInt(block), 17);
  v.writeUInt16BE(43, 25);
  v.write('LTFS\0', 27, 'ascii');
  v.write('2f1ec8b4-6e5c-4d2a-9a57-0c1b2d3e4f50\0', 32, 'ascii');
  v[69] = 1;
  return v;
}

async function readCoherency(h: ScsiHost, partition: number): Promise<Buffer | undefined> {
  const r = await h.exec(DRIVE, Cdb.readAttribute(0, COHERENCY, 8192, partition), { allocation: 8192 });
  ok(r);
  return attributeValue(r.data, COHERENCY);
}

async function writeCoherency(h: ScsiHost, partition: number, value: Buffer): Promise<void> {
  const list = attributeList([[COHERENCY, 0, value]]);
  ok(await h.exec(DRIVE, Cdb.writeAttribute(list.length, partition), { dataOut: list }));
}

async function write(h: ScsiHost, text: string): Promise<void> {
  ok(await h.exec(DRIVE, Cdb.write6(text.length), { dataOut: Buffer.from(text) }));
}

/** A cartridge formatted with two partitions as mkltfs asks, a label and an index on each. */
async function ltfsFormatted(): Promise<ScsiHost> {
  const { target, host: h } = await startWithCartridge(LABEL);
  t = target;
  const sense = await h.exec(DRIVE, Cdb.modeSense10(0x11), { allocation: 1024 });
  ok(sense);
  const data = Buffer.from(sense.data);
  data[0] = data[1] = 0;
  const page = data.subarray(16);
  page[3] = 1;
  page[4] = 0x20 | (page[4]! & 0x1f);
  page[6] = 0x09;
  page.writeUInt16BE(0xffff, 8);
  page.writeUInt16BE(1, 10);
  ok(await h.exec(DRIVE, Cdb.modeSelect10(data.length), { dataOut: data }));
  ok(await h.exec(DRIVE, Cdb.formatMedium(1)));
  for (const partition of [1, 0]) {
    ok(await h.exec(DRIVE, locate(partition, 0)));
    await write(h, `VOL1-${partition}`);
    ok(await h.exec(DRIVE, Cdb.writeFilemarks(1)));
    await write(h, `<index p${partition} gen=1/>`);
    ok(await h.exec(DRIVE, Cdb.writeFilemarks(1)));
  }
  return h;
}

describe('MAM volume change reference (0009h), as LTFS compares it with its coherency data', () => {
  it('stays what LTFS stored with its index across reads, unloads and loads that write nothing', async () => {
    const h = await ltfsFormatted();
    const stored = await vcr(h);
    for (const partition of [0, 1]) await writeCoherency(h, partition, coherency(stored, 1, 3));
    expect(await vcr(h)).toBe(stored);

    for (let i = 0; i < 2; i++) {
      ok(await h.exec(DRIVE, Cdb.loadUnload(false)));
      ok(await h.exec(DRIVE, Cdb.loadUnload(true)));
      await h.clearUnitAttentions(DRIVE);
      // What ltfs_mount compares: the reference now and the one in each partition's coherency.
      expect(await vcr(h)).toBe(stored);
      for (const partition of [0, 1]) {
        const kept = await readCoherency(h, partition);
        expect(kept).toEqual(coherency(stored, 1, 3));
        expect(Number(kept!.readBigUInt64BE(1))).toBe(stored);
      }
    }
  });

  it('moves on every write, filemark, erase and format after it was read, whatever the size or place', async () => {
    const h = await ltfsFormatted();
    const seen = [await vcr(h)];
    const changed = async (what: string) => {
      const v = await vcr(h);
      expect(seen, what).not.toContain(v);
      seen.push(v);
      // Read again with nothing written: the same.
      expect(await vcr(h), what).toBe(v);
    };

    // An index rewritten in place with one of the same length, as LTFS does on the index
    // partition: the same bytes and objects as before, yet a change.
    ok(await h.exec(DRIVE, locate(0, 2)));
    await write(h, '<index p0 gen=2/>');
    await changed('overwrite of the same length');
    ok(await h.exec(DRIVE, Cdb.writeFilemarks(1)));
    await changed('write filemarks');
    ok(await h.exec(DRIVE, locate(1, 2)));
    ok(await h.exec(DRIVE, Cdb.erase()));
    await changed('erase');
    ok(await h.exec(DRIVE, locate(0, 0)));
    ok(await h.exec(DRIVE, Cdb.formatMedium(1)));
    await changed('format');

    // Unloaded and loaded again: the last value, and the next change still moves it.
    ok(await h.exec(DRIVE, Cdb.loadUnload(false)));
    ok(await h.exec(DRIVE, Cdb.loadUnload(true)));
    await h.clearUnitAttentions(DRIVE);
    expect(await vcr(h)).toBe(seen.at(-1));
    await write(h, 'after the load');
    await changed('first write of a load');
  });

  it('is saved in the cartridge memory as it moves, so a restarted emulator reports it', async () => {
    const h = await ltfsFormatted();
    await vcr(h);
    await write(h, 'more');
    const after = await vcr(h);
    const stored = (await readMam(cartridgeDir(`${t.dir}/lib1`, LABEL))).get(VCR);
    expect(stored?.readUInt32BE(0)).toBe(after);
  });
});
