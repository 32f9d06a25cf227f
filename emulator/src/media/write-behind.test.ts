import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { mountSmallFilesystem } from '../testing/small-filesystem.js';
import { tempDirPerTest } from '../testing/temp-dir-per-test.js';
import { Cartridge, type IssuedBlock } from './cartridge.js';
import { HEADER_SIZE, ENTRY_SIZE } from './index-file.js';
import { IMAGE_FILES } from './layout.js';
import { mintCartridge } from './mint.js';
import { takeBlockBuffer } from './block-buffers.js';
import { crc32c } from '../util/crc32c.js';
import { xxh3Low32 } from './checksum.js';

/** Blocks written behind (Cartridge.issueBlock), their failures, and older index versions. */

const tmp = tempDirPerTest();

const BLOCK = 256 * 1024;
/** A block in a pool buffer (aligned: it goes around the page cache where the disk allows). */
function block(fill: number, length = BLOCK): Buffer {
  const b = takeBlockBuffer(length);
  b.fill(fill);
  return b;
}

/** The last byte of each block from object `from` up to a filemark or end of data, and which. */
async function readFills(cart: Cartridge, from = 2): Promise<number[] & { end?: string }> {
  await cart.locate(from);
  const fills: number[] & { end?: string } = [];
  for (;;) {
    const r = await cart.readBlock(1 << 20);
    if (r.kind !== 'data') {
      fills.end = r.kind;
      return fills;
    }
    fills.push(r.data[r.data.length - 1]!);
  }
}

describe('blocks written behind', () => {
  it('places each block at once and lands them all in tape order, odd sizes included', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'WBH001L8', generation: 8 });
    const cart = await Cartridge.open(dir);
    await cart.spaceToEod();
    const issued: IssuedBlock[] = [];
    for (let i = 1; i <= 24; i++) {
      // Every third block has an odd length: it cannot go around the page cache.
      issued.push(await cart.issueBlock(block(i, i % 3 === 0 ? BLOCK - 100 : BLOCK)));
      expect(cart.position()).toMatchObject({ object: 2 + i, eod: true });
    }
    expect(cart.objectCount).toBe(26);
    await Promise.all(issued.map((b) => b.written));
    // Killed right after the last block was written: every block is there on reopening.
    await cart.abandon();
    const reopened = await Cartridge.open(dir);
    expect([...(await readFills(reopened))]).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    await reopened.close();
  });

  it('waits for blocks on their way before any other operation', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'WBH002L8', generation: 8 });
    const cart = await Cartridge.open(dir);
    await cart.spaceToEod();
    for (let i = 1; i <= 8; i++) await cart.issueBlock(block(i));
    // A filemark goes after all of them, and reading from BOT sees them without waiting on anyone.
    await cart.writeFilemarks(1);
    const fills = await readFills(cart);
    expect([...fills]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(fills.end).toBe('filemark');
    expect((await cart.readBlock(BLOCK)).kind).toBe('eod');
    await cart.close();
  });

  it('ends the tape after the last block that made it when the pool fills up', async () => {
    const fs = await mountSmallFilesystem(2 * 1024 * 1024);
    let cart: Cartridge | undefined;
    try {
      const dir = await mintCartridge({ mediaDir: fs.path, label: 'FUL001L8', generation: 8 });
      cart = await Cartridge.open(dir);
      await cart.spaceToEod();
      const issued: IssuedBlock[] = [];
      for (let i = 1; i <= 12; i++) issued.push(await cart.issueBlock(block(i)));
      const outcomes = await Promise.allSettled(issued.map((b) => b.written));
      const landed = outcomes.findIndex((o) => o.status === 'rejected');
      expect(landed).toBeGreaterThan(0);
      // After the first failure nothing lands, even blocks whose bytes found room.
      expect(outcomes.slice(landed).every((o) => o.status === 'rejected')).toBe(true);
      const failure = outcomes[landed] as PromiseRejectedResult;
      expect((failure.reason as NodeJS.ErrnoException).code).toBe('ENOSPC');
      // The next operation finds the tape ending after the blocks that landed.
      expect(await cart.spaceToEod()).toMatchObject({ object: 2 + landed, eod: true });
      // The blocks start on the first 4 KiB boundary after the 80-byte label.
      expect(cart.sizeBytes).toBe(4096 + landed * BLOCK);
      expect([...(await readFills(cart))]).toEqual(Array.from({ length: landed }, (_, i) => i + 1));
      await cart.close();
      cart = await Cartridge.open(dir);
      expect(cart.objectCount).toBe(2 + landed);
    } finally {
      await cart?.close();
      await fs.cleanup();
    }
  });
});

/** Data-file offsets of the index's entries, from object `from` on. */
async function entryOffsets(dir: string, from = 2): Promise<number[]> {
  const index = await readFile(join(dir, IMAGE_FILES.index));
  const offsets: number[] = [];
  for (let at = HEADER_SIZE + from * ENTRY_SIZE; at + ENTRY_SIZE <= index.length; at += ENTRY_SIZE)
    offsets.push(Number(index.readBigUInt64LE(at)));
  return offsets;
}

describe('index versions', () => {
  it('places large 4 KiB-multiple blocks on 4 KiB boundaries, others back to back, and recovers them after a kill', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'ALN001L8', generation: 8 });
    const cart = await Cartridge.open(dir);
    await cart.spaceToEod();
    await cart.writeBlock(block(1)); // after the 80-byte label: moves up to 4096
    await cart.writeBlock(block(2, 1000)); // small: back to back
    await cart.writeBlock(block(3)); // large again: the next boundary
    await cart.writeBlock(block(4, 65_535)); // not a multiple of 4 KiB: back to back
    await cart.abandon();
    const after1 = 4096 + BLOCK;
    const aligned3 = Math.ceil((after1 + 1000) / 4096) * 4096;
    expect(await entryOffsets(dir)).toEqual([4096, after1, aligned3, aligned3 + BLOCK]);
    const reopened = await Cartridge.open(dir);
    expect([...(await readFills(reopened))]).toEqual([1, 2, 3, 4]);
    // Rewriting from the small block: the new large block follows the first one directly.
    await reopened.locate(3);
    await reopened.writeBlock(block(9));
    await reopened.abandon();
    expect(await entryOffsets(dir)).toEqual([4096, after1]);
    const again = await Cartridge.open(dir);
    expect([...(await readFills(again))]).toEqual([1, 9]);
    await again.close();
  });

  it('keeps extending a version 2 image back to back', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'V2B001L8', generation: 8 });
    const indexPath = join(dir, IMAGE_FILES.index);
    const index = await readFile(indexPath);
    index.writeUInt32LE(2, 8);
    await writeFile(indexPath, index);
    const cart = await Cartridge.open(dir);
    await cart.spaceToEod();
    for (const fill of [1, 2]) await cart.writeBlock(block(fill));
    await cart.abandon();
    expect(await entryOffsets(dir)).toEqual([80, 80 + BLOCK]);
    const reopened = await Cartridge.open(dir);
    expect([...(await readFills(reopened))]).toEqual([1, 2]);
    await reopened.close();
    expect((await readFile(indexPath)).readUInt32LE(8)).toBe(2);
  });

  it('checksums new images with XXH3 (version 6), and keeps CRC-32 in version 4 and CRC-32C in version 3 images', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'V5X001L8', generation: 8 });
    const indexPath = join(dir, IMAGE_FILES.index);
    const dataPath = join(dir, IMAGE_FILES.data);
    const cart = await Cartridge.open(dir);
    await cart.spaceToEod();
    for (const fill of [1, 2]) await cart.writeBlock(block(fill));
    await cart.close();
    const sumAt = (i: number) => HEADER_SIZE + (2 + i) * ENTRY_SIZE + 16;
    /** Each block entry's stored checksum, and `sum` of the block's bytes in the data file. */
    const sums = async (sum: (bytes: Buffer) => number) => {
      const [index, data] = [await readFile(indexPath), await readFile(dataPath)];
      const offsets = await entryOffsets(dir);
      return {
        stored: offsets.map((_, i) => index.readUInt32LE(sumAt(i))),
        computed: offsets.map((offset) => sum(data.subarray(offset, offset + BLOCK))),
      };
    };
    expect((await readFile(indexPath)).readUInt32LE(8)).toBe(6);
    const v6 = await sums(xxh3Low32);
    expect(v6.stored).toEqual(v6.computed);
    expect(v6.stored).not.toEqual((await sums((b) => crc32(b) >>> 0)).computed);

    // The same image as versions 4 and 3 wrote it: CRC-32, then CRC-32C, of every block. It
    // reads back, and a block appended gets that version's checksum; the version stays.
    const older = [
      [4, (b: Buffer) => crc32(b) >>> 0],
      [3, (b: Buffer) => crc32c(b)],
    ] as const;
    for (const [version, sum] of older) {
      const index = await readFile(indexPath);
      index.writeUInt32LE(version, 8);
      const { computed } = await sums(sum);
      computed.slice(0, 2).forEach((value, i) => index.writeUInt32LE(value, sumAt(i)));
      await writeFile(indexPath, index.subarray(0, sumAt(2) - 16));
      const opened = await Cartridge.open(dir);
      expect([...(await readFills(opened))]).toEqual([1, 2]);
      await opened.spaceToEod();
      await opened.writeBlock(block(version));
      await opened.close();
      const again = await Cartridge.open(dir);
      expect([...(await readFills(again))]).toEqual([1, 2, version]);
      await again.close();
      expect((await readFile(indexPath)).readUInt32LE(8)).toBe(version);
      const after = await sums(sum);
      expect(after.stored).toEqual(after.computed);
    }
  });

  it('opens, verifies and extends a version 1 image (CRC-32 checksums)', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'OLD001L8', generation: 8 });
    const cart = await Cartridge.open(dir);
    await cart.spaceToEod();
    for (const fill of [1, 2, 3]) await cart.writeBlock(Buffer.alloc(1000, fill));
    await cart.close();
    // Rewrite it as the first release did: version 1, zlib CRC-32 of every block.
    const indexPath = join(dir, IMAGE_FILES.index);
    const index = await readFile(indexPath);
    const data = await readFile(join(dir, IMAGE_FILES.data));
    index.writeUInt32LE(1, 8);
    for (let at = HEADER_SIZE; at < index.length; at += ENTRY_SIZE) {
      const offset = Number(index.readBigUInt64LE(at));
      const length = index.readUInt32LE(at + 8);
      index.writeUInt32LE(length > 0 ? crc32(data.subarray(offset, offset + length)) : 0, at + 16);
    }
    await writeFile(indexPath, index);

    const old = await Cartridge.open(dir);
    expect([...(await readFills(old))]).toEqual([1, 2, 3]);
    await old.spaceToEod();
    await old.writeBlock(Buffer.alloc(1000, 4));
    await old.close();
    const again = await Cartridge.open(dir);
    expect([...(await readFills(again))]).toEqual([1, 2, 3, 4]);
    expect((await readFile(indexPath)).readUInt32LE(8)).toBe(1);
    // A damaged block of a version 1 image still fails its checksum.
    await again.close();
    const damaged = await readFile(join(dir, IMAGE_FILES.data));
    damaged[80 + 1500] = damaged[80 + 1500]! ^ 0xff;
    await writeFile(join(dir, IMAGE_FILES.data), damaged);
    const bad = await Cartridge.open(dir);
    await bad.locate(3);
    await expect(bad.readBlock(1000)).rejects.toMatchObject({ reason: 'corrupt' });
    await bad.close();
  });
});
