import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirPerTest } from '../testing/temp-dir-per-test.js';
import { Cartridge, type ReadResult } from './cartridge.js';
import { MediaError } from './errors.js';
import { cartridgeStats } from './image.js';
import { IMAGE_FILES } from './layout.js';
import { mintCartridge } from './mint.js';
import { parseVol1 } from './vol1.js';

const tmp = tempDirPerTest();

const block = (n: number, fill: number) => Buffer.alloc(n, fill);

async function fresh(capacityBytes?: number): Promise<Cartridge> {
  const dir = await mintCartridge({ mediaDir: tmp.path, label: 'ABC001L8', generation: 8, capacityBytes });
  const cart = await Cartridge.open(dir);
  // Past VOL1 and its filemark: where a host's first backup file would start.
  await cart.spaceToEod();
  return cart;
}

function dataOf(r: ReadResult): Buffer {
  if (r.kind !== 'data') throw new Error(`expected data, got ${r.kind}`);
  return r.data;
}

describe('cartridge read/write', () => {
  it('round-trips variable-length blocks and cuts a block longer than the read', async () => {
    const cart = await fresh();
    await cart.writeBlock(block(100, 1));
    await cart.writeBlock(block(65536, 2));
    await cart.writeBlock(block(3, 3));
    expect(cart.position()).toMatchObject({ object: 5, eod: true, filemarksBefore: 1 });
    await cart.locate(2);
    expect(dataOf(await cart.readBlock(1 << 20))).toEqual(block(100, 1));
    const cut = await cart.readBlock(10);
    expect(cut).toEqual({ kind: 'data', data: block(10, 2), length: 65536 });
    expect(dataOf(await cart.readBlock(10))).toEqual(block(3, 3));
    expect(await cart.readBlock(10)).toEqual({ kind: 'eod' });
    expect(cart.position()).toMatchObject({ object: 5, eod: true });
    // The 64 KiB block starts on the 4 KiB boundary after the label and the 100-byte block.
    expect(cart.sizeBytes).toBe(4096 + 65536 + 3);
    await cart.close();
  });

  it('reads past a filemark and reports the position in objects', async () => {
    const cart = await fresh();
    await cart.rewind();
    expect(cart.position()).toEqual({ partition: 0, object: 0, filemarksBefore: 0, bop: true, eod: false });
    expect(await cart.readBlock(80)).toMatchObject({ kind: 'data', length: 80 });
    expect(await cart.readBlock(80)).toEqual({ kind: 'filemark' });
    expect(cart.position()).toEqual({ partition: 0, object: 2, filemarksBefore: 1, bop: false, eod: true });
    await cart.close();
  });

  it('discards everything after the position when writing in the middle', async () => {
    const cart = await fresh();
    for (let i = 0; i < 5; i++) await cart.writeBlock(block(10, i));
    await cart.writeFilemarks(2);
    await cart.locate(4);
    await cart.writeBlock(block(7, 9));
    expect(cart.objectCount).toBe(5);
    expect(cart.sizeBytes).toBe(80 + 2 * 10 + 7);
    await cart.locate(3);
    expect(dataOf(await cart.readBlock(100))).toEqual(block(10, 1));
    expect(dataOf(await cart.readBlock(100))).toEqual(block(7, 9));
    expect(await cart.readBlock(100)).toEqual({ kind: 'eod' });
    // Filemarks written in the middle cut the same way, and the filemark count follows.
    await cart.locate(3);
    await cart.writeFilemarks(1);
    await cart.spaceToEod();
    expect(cart.position()).toMatchObject({ object: 4, filemarksBefore: 2 });
    await cart.close();
  });

  it('erases from the position to the end', async () => {
    const cart = await fresh();
    await cart.writeBlock(block(10, 1));
    await cart.writeBlock(block(10, 2));
    await cart.locate(3);
    await cart.erase();
    expect(cart.objectCount).toBe(3);
    expect(cart.position()).toMatchObject({ object: 3, eod: true });
    await cart.close();
  });

  it('survives close and reopen with every object intact', async () => {
    const cart = await fresh();
    await cart.writeBlock(block(1000, 7));
    await cart.writeFilemarks(1);
    await cart.close();
    const again = await Cartridge.open(cart.dir);
    expect(again.objectCount).toBe(4);
    await again.locate(2);
    expect(dataOf(await again.readBlock(4096))).toEqual(block(1000, 7));
    expect(await again.readBlock(4096)).toEqual({ kind: 'filemark' });
    await again.close();
    await expect(again.readBlock(1)).rejects.toMatchObject({ reason: 'closed' });
  });
});

describe('cartridge spacing and locate', () => {
  // Layout after VOL1+FM: objects 2,3,4 blocks | 5 FM | 6,7 blocks | 8 FM | 9 block | 10 EOD
  async function layout(): Promise<Cartridge> {
    const cart = await fresh();
    for (const b of [1, 2, 3]) await cart.writeBlock(block(4, b));
    await cart.writeFilemarks(1);
    for (const b of [4, 5]) await cart.writeBlock(block(4, b));
    await cart.writeFilemarks(1);
    await cart.writeBlock(block(4, 6));
    return cart;
  }

  it('spaces blocks forward, stopping past a filemark or at end of data', async () => {
    const cart = await layout();
    await cart.locate(2);
    expect(await cart.spaceBlocks(2)).toEqual({ done: 2, stop: 'none' });
    expect(cart.position().object).toBe(4);
    expect(await cart.spaceBlocks(5)).toEqual({ done: 1, stop: 'filemark' });
    expect(cart.position()).toMatchObject({ object: 6, filemarksBefore: 2 });
    await cart.locate(9);
    expect(await cart.spaceBlocks(3)).toEqual({ done: 1, stop: 'eod' });
    expect(cart.position()).toMatchObject({ object: 10, eod: true, filemarksBefore: 3 });
    await cart.close();
  });

  it('spaces blocks backward, stopping before a filemark or at BOP', async () => {
    const cart = await layout();
    await cart.locate(8);
    expect(await cart.spaceBlocks(-1)).toEqual({ done: 1, stop: 'none' });
    expect(cart.position().object).toBe(7);
    expect(await cart.spaceBlocks(-5)).toEqual({ done: 1, stop: 'filemark' });
    expect(cart.position()).toMatchObject({ object: 5, filemarksBefore: 1 });
    await cart.locate(1);
    expect(await cart.spaceBlocks(-3)).toEqual({ done: 1, stop: 'bop' });
    expect(cart.position()).toMatchObject({ object: 0, bop: true });
    await cart.close();
  });

  it('spaces filemarks both ways and locates beyond end of data to end of data', async () => {
    const cart = await layout();
    await cart.rewind();
    expect(await cart.spaceFilemarks(2)).toEqual({ done: 2, stop: 'none' });
    expect(cart.position()).toMatchObject({ object: 6, filemarksBefore: 2 });
    expect(await cart.spaceFilemarks(5)).toEqual({ done: 1, stop: 'eod' });
    expect(cart.position()).toMatchObject({ object: 10, eod: true });
    expect(await cart.spaceFilemarks(-1)).toEqual({ done: 1, stop: 'none' });
    expect(cart.position()).toMatchObject({ object: 8, filemarksBefore: 2 });
    expect(await cart.spaceFilemarks(-5)).toEqual({ done: 2, stop: 'bop' });
    expect(cart.position()).toMatchObject({ object: 0, bop: true });
    expect(await cart.locate(7)).toMatchObject({ object: 7, filemarksBefore: 2 });
    expect(dataOf(await cart.readBlock(4))).toEqual(block(4, 5));
    expect(await cart.locate(99)).toMatchObject({ object: 10, eod: true, filemarksBefore: 3 });
    await cart.close();
  });

  it('finds filemarks on a long tape without walking every entry', async () => {
    const cart = await fresh();
    for (let i = 0; i < 3000; i++) await cart.writeBlock(block(1, i & 0xff));
    await cart.writeFilemarks(1);
    await cart.writeBlock(block(1, 0xaa));
    await cart.rewind();
    expect(await cart.spaceFilemarks(2)).toEqual({ done: 2, stop: 'none' });
    expect(cart.position().object).toBe(3003);
    expect(dataOf(await cart.readBlock(1))).toEqual(block(1, 0xaa));
    await cart.locate(2);
    expect(await cart.spaceBlocks(5000)).toEqual({ done: 3000, stop: 'filemark' });
    await cart.close();
  });
});

describe('cartridge capacity and protection', () => {
  it('reports early warning in the last 1% and refuses a write past the end', async () => {
    const cart = await fresh(10_000);
    expect(await cart.writeBlock(block(9000, 1))).toEqual({ earlyWarning: false });
    // 9,900 bytes is where the last 1% of 10,000 starts.
    expect(await cart.writeBlock(block(820, 2))).toEqual({ earlyWarning: true });
    expect(await cart.writeFilemarks(1)).toEqual({ earlyWarning: true });
    await expect(cart.writeBlock(block(200, 3))).rejects.toMatchObject({ reason: 'end_of_medium' });
    expect(cart.sizeBytes).toBe(80 + 9000 + 820);
    expect(await cart.writeBlock(block(100, 4))).toEqual({ earlyWarning: true });
    await cart.close();
  });

  it('refuses writes, erase and MAM writes while write-protected, and keeps the flag', async () => {
    const cart = await fresh();
    await cart.setWriteProtected(true);
    await expect(cart.writeBlock(block(1, 1))).rejects.toBeInstanceOf(MediaError);
    await expect(cart.writeFilemarks(1)).rejects.toMatchObject({ reason: 'write_protected' });
    await expect(cart.erase()).rejects.toMatchObject({ reason: 'write_protected' });
    await expect(cart.writeMam(new Map([[0x0800, Buffer.from('X')]]))).rejects.toMatchObject({
      reason: 'write_protected',
    });
    await cart.close();
    const again = await Cartridge.open(cart.dir);
    expect(again.writeProtected).toBe(true);
    await again.rewind();
    expect(parseVol1(dataOf(await again.readBlock(80)))?.volumeId).toBe('ABC001');
    await again.close();
  });

  it('keeps MAM attributes by id and merges updates', async () => {
    const cart = await fresh();
    const mam = await cart.readMam();
    expect(mam.get(0x0400)?.toString('ascii')).toBe('IBM     ');
    expect(mam.get(0x0405)).toEqual(Buffer.from([0x5e]));
    expect(mam.get(0x0806)?.toString('ascii').trim()).toBe('ABC001L8');
    await cart.writeMam(
      new Map<number, Buffer | null>([
        [0x0800, Buffer.from('BACKUPCO')],
        [0x0400, null],
      ]),
    );
    const after = await cart.readMam();
    expect(after.get(0x0800)?.toString()).toBe('BACKUPCO');
    expect(after.has(0x0400)).toBe(false);
    expect(after.get(0x0401)?.toString('ascii').trim()).toBe('VTLABC001L8');
    await cart.close();
  });

  it('is cheap on disk when fresh and counts what the host wrote', async () => {
    const cart = await fresh();
    await cart.writeBlock(block(256 * 1024, 5));
    await cart.close();
    const stats = await cartridgeStats(cart.dir);
    // The block starts on the first 4 KiB boundary after the 80-byte label.
    expect(stats.size_bytes).toBe(4096 + 256 * 1024);
    expect(stats.stub).toBe(false);
    expect(stats.phys_bytes).toBeGreaterThan(0);
    expect(stats.modified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('rewriting from BOT overwrites in place: the old content is gone at once, the new survives a kill', async () => {
    const cart = await fresh();
    for (let i = 0; i < 8; i++) await cart.writeBlock(block(1 << 20, 7));
    await cart.sync();
    await cart.rewind();
    await cart.writeBlock(block(80, 9));
    await cart.writeFilemarks(1);
    await cart.sync();
    await cart.abandon();
    // The old bytes past the new data are still in the file, but nothing points at them.
    expect((await cartridgeStats(cart.dir)).size_bytes).toBe(80);
    const again = await Cartridge.open(cart.dir);
    expect(again.objectCount).toBe(2);
    expect(dataOf(await again.readBlock(1 << 20))).toEqual(block(80, 9));
    expect(await again.readBlock(80)).toEqual({ kind: 'filemark' });
    expect(await readdir(cart.dir)).toEqual(['data', 'index', 'mam.json', 'meta.json']);
    await again.close();
    expect((await stat(join(cart.dir, IMAGE_FILES.data))).size).toBe(80);
  });

  it('never brings back old blocks past a rewrite, even when the new ones repeat them byte for byte', async () => {
    const cart = await fresh();
    for (let i = 0; i < 8; i++) await cart.writeBlock(block(4096, i));
    await cart.sync();
    await cart.rewind();
    // The same first two blocks again, not synced: the old six behind them are intact on disk.
    for (let i = 0; i < 2; i++) await cart.writeBlock(block(4096, i));
    await cart.abandon();
    const again = await Cartridge.open(cart.dir);
    expect(again.objectCount).toBeLessThanOrEqual(2);
    await again.close();
  });

  it('cuts what is left of the old data when the rewritten tape is unloaded', async () => {
    const cart = await fresh();
    for (let i = 0; i < 4; i++) await cart.writeBlock(block(1 << 20, 7));
    await cart.rewind();
    await cart.writeBlock(block(8192, 9));
    // Loaded: the status already shows what the host wrote.
    expect((await cartridgeStats(cart.dir)).size_bytes).toBe(8192);
    await cart.close();
    expect((await stat(join(cart.dir, IMAGE_FILES.data))).size).toBe(8192);
    const again = await Cartridge.open(cart.dir);
    expect(dataOf(await again.readBlock(1 << 20))).toEqual(block(8192, 9));
    expect(await again.readBlock(1 << 20)).toEqual({ kind: 'eod' });
    await again.close();
  });

  it('erasing from BOT leaves an empty tape that takes new data', async () => {
    const cart = await fresh();
    await cart.writeBlock(block(4096, 1));
    await cart.rewind();
    await cart.erase();
    expect(cart.objectCount).toBe(0);
    expect(await cart.readBlock(4096)).toEqual({ kind: 'eod' });
    await cart.writeBlock(block(100, 2));
    await cart.rewind();
    expect(dataOf(await cart.readBlock(4096))).toEqual(block(100, 2));
    await cart.close();
    expect((await cartridgeStats(cart.dir)).size_bytes).toBe(100);
  });

  it('reads the same blocks through the page cache when direct reads are off', async () => {
    const cart = await fresh();
    const blocks = [block(100, 1), block(300_001, 2), block(4096, 3)];
    for (const b of blocks) await cart.writeBlock(b);
    await cart.close();
    const buffered = await Cartridge.open(cart.dir, { directIo: false });
    await buffered.locate(2);
    for (const b of blocks) expect(dataOf(await buffered.readBlock(1 << 20))).toEqual(b);
    await buffered.close();
  });
});
