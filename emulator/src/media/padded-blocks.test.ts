import { randomBytes } from 'node:crypto';
import { readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDirPerTest } from '../testing/temp-dir-per-test.js';
import { giveAlignedBuffer, takeAlignedBuffer } from './aligned-buffers.js';
import { takeBlockBuffer } from './block-buffers.js';
import { Cartridge, type IssuedBlock } from './cartridge.js';
import { DirectReader } from './direct-read.js';
import { DirectWriter } from './direct-write.js';
import { ENTRY_SIZE, HEADER_SIZE } from './index-file.js';
import { IMAGE_FILES } from './layout.js';
import { mintCartridge } from './mint.js';
import { continuesRun } from './read-ahead.js';

/**
 * Blocks whose length is not a multiple of 4 KiB (docs/storage.md): from index version 6 every
 * block of 32 KiB or more starts on a 4 KiB boundary and is followed by zeros up to the next.
 */

const tmp = tempDirPerTest();
const KiB = 1024;
const alignUp = (n: number) => Math.ceil(n / (4 * KiB)) * 4 * KiB;

afterEach(() => {
  vi.restoreAllMocks();
});

/** A host's stream: blocks of these lengths (random bytes) and filemarks ('FM'). */
const STREAM = [65_000, 512, 32 * KiB + 1, 40_000, 'FM', 65_000, 64 * KiB, 1000, 'FM'] as const;

/**
 * A block in an aligned slot whose bytes past the block hold 0xee, as a slot an earlier transfer
 * used: the padding written must be zeros all the same.
 */
function hostBlock(content: Buffer): Buffer {
  const stale = takeAlignedBuffer(content.length)!;
  stale.fill(0xee);
  const whole = Buffer.from(stale.buffer, stale.byteOffset, alignUp(content.length));
  whole.fill(0xee);
  giveAlignedBuffer(stale);
  const block = takeBlockBuffer(content.length);
  content.copy(block);
  return block;
}

/** Writes STREAM from object 2 (after the VOL1 label and its filemark); the blocks written. */
async function writeStream(cart: Cartridge, lengths: readonly (number | 'FM')[] = STREAM): Promise<Buffer[]> {
  await cart.spaceToEod();
  const blocks: Buffer[] = [];
  for (const item of lengths) {
    if (item === 'FM') {
      await cart.writeFilemarks(1);
      continue;
    }
    const content = randomBytes(item);
    await cart.writeBlock(hostBlock(content));
    blocks.push(content);
  }
  return blocks;
}

/** Every block from object 2 to end of data, filemarks skipped. */
async function readBlocks(cart: Cartridge): Promise<Buffer[]> {
  await cart.locate(2);
  const blocks: Buffer[] = [];
  for (;;) {
    const r = await cart.readBlock(1 << 20);
    if (r.kind === 'eod') return blocks;
    if (r.kind === 'data') blocks.push(Buffer.from(r.data));
  }
}

/** Data-file offsets and lengths of the index's entries from object 2 on. */
async function entries(dir: string): Promise<{ offset: number; length: number }[]> {
  const index = await readFile(join(dir, IMAGE_FILES.index));
  const out: { offset: number; length: number }[] = [];
  for (let at = HEADER_SIZE + 2 * ENTRY_SIZE; at + ENTRY_SIZE <= index.length; at += ENTRY_SIZE)
    out.push({ offset: Number(index.readBigUInt64LE(at)), length: index.readUInt32LE(at + 8) });
  return out;
}

async function setVersion(dir: string, version: number): Promise<void> {
  const path = join(dir, IMAGE_FILES.index);
  const index = await readFile(path);
  index.writeUInt32LE(version, 8);
  await writeFile(path, index);
}

describe('blocks that are not 4 KiB multiples', () => {
  it('places every block of 32 KiB or more on a 4 KiB boundary in new images, and keeps older versions as they were', async () => {
    const v6 = await mintCartridge({ mediaDir: tmp.path, label: 'PAD601L8', generation: 8 });
    const v5 = await mintCartridge({ mediaDir: tmp.path, label: 'PAD501L8', generation: 8 });
    await setVersion(v5, 5);
    for (const dir of [v6, v5]) {
      const cart = await Cartridge.open(dir);
      await writeStream(cart);
      await cart.close();
    }
    // After the 80-byte VOL1: 65,000 aligned; 512 right after it (inside its padding); 32 KiB + 1
    // and 40,000 aligned; a filemark where 40,000 ends; the next 65,000 aligned again.
    expect((await entries(v6)).map((e) => e.offset)).toEqual([
      4096, 69_096, 69_632, 106_496, 146_496, 147_456, 212_992, 278_528, 279_528,
    ]);
    // Version 5: only the 64 KiB block (a 4 KiB multiple) is aligned, the rest back to back.
    expect((await entries(v5)).map((e) => e.offset)).toEqual([
      80, 65_080, 65_592, 98_361, 138_361, 138_361, 204_800, 270_336, 271_336,
    ]);
    expect((await readFile(join(v5, IMAGE_FILES.index))).readUInt32LE(8)).toBe(5);
    // The padding after each padded block is zeros (not the slot's stale 0xee), where no later
    // record (the short block written inside it) lies.
    const data = await readFile(join(v6, IMAGE_FILES.data));
    const list = await entries(v6);
    const inRecord = (at: number) => list.some((e) => at >= e.offset && at < e.offset + e.length);
    const padding = list
      .filter((e) => e.length >= 32 * KiB)
      .flatMap((e) => {
        const end = e.offset + e.length;
        return Array.from({ length: alignUp(end) - end }, (_, k) => end + k).filter((at) => !inRecord(at));
      });
    // 24 after the 512-byte block, then 4,095, 960 and 536 after the other odd blocks.
    expect(padding.length).toBe(24 + 4095 + 960 + 536);
    expect(padding.filter((at) => data[at] !== 0)).toEqual([]);
    // The last record is a filemark inside the last 1000-byte block's page: the file ends there,
    // and the logical size counts no padding.
    expect(data.length).toBe(279_528);
  });

  it('reads odd blocks back byte-identical across a reopen, however they were issued', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'PAD602L8', generation: 8 });
    const cart = await Cartridge.open(dir);
    const first = await writeStream(cart);
    // Written behind, many at a time: a 512-byte block issued right after a padded one lands
    // inside its zeros and must not be overwritten by them. Some from ordinary buffers (copied
    // into a slot for the direct write).
    const issued: IssuedBlock[] = [];
    const behind: Buffer[] = [];
    for (let i = 0; i < 40; i++) {
      const content = randomBytes(i % 2 === 0 ? 65_000 : 512);
      behind.push(content);
      issued.push(await cart.issueBlock(i % 4 === 0 ? Buffer.from(content) : hostBlock(content)));
    }
    await Promise.all(issued.map((b) => b.written));
    await cart.writeFilemarks(1);
    const sizeBytes = cart.sizeBytes;
    await cart.close();
    const list = await entries(dir);
    expect(list.filter((e) => e.length >= 32 * KiB).every((e) => e.offset % 4096 === 0)).toBe(true);

    const again = await Cartridge.open(dir);
    expect(again.sizeBytes).toBe(sizeBytes);
    const read = await readBlocks(again);
    expect(read.length).toBe(first.length + behind.length);
    [...first, ...behind].forEach((b, i) => expect(read[i]!.equals(b), `block ${i}`).toBe(true));
    await again.close();
  });

  it('writes odd blocks around the page cache, those of a transfer of several included, each with its own bytes', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'PAD605L8', generation: 8 });
    const cart = await Cartridge.open(dir);
    await cart.spaceToEod();
    // The slots the blocks are copied into held another transfer's bytes.
    const used = [takeAlignedBuffer(40_000)!, takeAlignedBuffer(40_000)!];
    for (const slot of used) {
      Buffer.from(slot.buffer, slot.byteOffset, 64 * KiB).fill(0xee);
      giveAlignedBuffer(slot);
    }
    const directWrites = vi.spyOn(DirectWriter.prototype, 'write');
    // A fixed-mode WRITE of three 40,000-byte blocks lands them back to back in one slot: the
    // zeros after the first must not go over the second.
    const transfer = takeBlockBuffer(3 * 40_000);
    randomBytes(3 * 40_000).copy(transfer);
    const expected = Buffer.from(transfer);
    const issued: IssuedBlock[] = [];
    for (let i = 0; i < 3; i++)
      issued.push(await cart.issueBlock(transfer.subarray(i * 40_000, (i + 1) * 40_000)));
    // A variable-mode WRITE lands its one block in a slot of its own.
    const single = takeBlockBuffer(40_000);
    randomBytes(40_000).copy(single);
    const singleBytes = Buffer.from(single);
    issued.push(await cart.issueBlock(single));
    await Promise.all(issued.map((b) => b.written));
    await cart.close();
    expect(transfer.equals(expected)).toBe(true);
    const wentDirect = await Promise.all(directWrites.mock.results.map((r) => r.value as Promise<boolean>));
    expect(wentDirect.length).toBeGreaterThan(0);
    expect(wentDirect.every(Boolean)).toBe(true);
    const data = await readFile(join(dir, IMAGE_FILES.data));
    const list = await entries(dir);
    // Zeros between the blocks, not the slots' 0xee.
    const gaps = list.slice(1).map((e, i) => data.subarray(list[i]!.offset + list[i]!.length, e.offset));
    expect(gaps.map((g) => g.length)).toEqual([960, 960, 960]);
    expect(gaps.every((g) => g.every((b) => b === 0))).toBe(true);
    const again = await Cartridge.open(dir);
    const read = await readBlocks(again);
    await again.close();
    expect(Buffer.concat(read).equals(Buffer.concat([expected, singleBytes]))).toBe(true);
  });

  it('recovers a torn padded write and goes on from the last whole block', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'PAD603L8', generation: 8 });
    const cart = await Cartridge.open(dir);
    const kept = await writeStream(cart, [65_000, 40_000]);
    await cart.sync();
    await writeStream(cart, [65_000, 32 * KiB + 1]);
    await cart.abandon();
    const list = await entries(dir);
    expect(list.map((e) => e.offset)).toEqual([4096, 69_632, 110_592, 176_128]);
    const dataPath = join(dir, IMAGE_FILES.data);
    // Killed in the middle of the last block's write: the block before it and its zeros stay.
    await truncate(dataPath, 176_128 + 20_000);
    const { size: before } = await stat(dataPath);
    expect(before).toBe(196_128);
    const repaired = await Cartridge.open(dir);
    expect(repaired.objectCount).toBe(5);
    expect(repaired.sizeBytes).toBe(110_592 + 65_000);
    expect((await stat(dataPath)).size).toBe(176_128);
    const thirdBlock = (await readBlocks(repaired))[2]!;
    // Killed inside a block's padding only: nothing is lost.
    await repaired.abandon();
    await truncate(dataPath, 110_592 + 65_100);
    const reopened = await Cartridge.open(dir);
    expect(reopened.objectCount).toBe(5);
    const small = randomBytes(512);
    const large = randomBytes(40_000);
    await reopened.spaceToEod();
    await reopened.writeBlock(hostBlock(small));
    await reopened.writeBlock(hostBlock(large));
    await reopened.close();
    expect((await entries(dir)).map((e) => e.offset)).toEqual([4096, 69_632, 110_592, 175_592, 176_128]);
    const last = await Cartridge.open(dir);
    const read = await readBlocks(last);
    expect(read.map((b) => b.length)).toEqual([65_000, 40_000, 65_000, 512, 40_000]);
    [...kept, thirdBlock, small, large].forEach((b, i) =>
      expect(read[i]!.equals(b), `block ${i}`).toBe(true),
    );
    await last.close();
  });

  it('reads blocks a padding apart in one long read', async () => {
    expect(
      continuesRun({ object: 0, offset: 4096, length: 65_000 }, { object: 1, offset: 69_632, length: 9 }),
    ).toBe(true);
    expect(
      continuesRun({ object: 0, offset: 0, length: 100 }, { object: 1, offset: 100 + 4096, length: 9 }),
    ).toBe(false);
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'PAD604L8', generation: 8 });
    const cart = await Cartridge.open(dir);
    const written = await writeStream(
      cart,
      Array.from({ length: 40 }, () => 65_000),
    );
    await cart.close();
    const reads = vi.spyOn(DirectReader.prototype, 'read');
    const again = await Cartridge.open(dir);
    const read = await readBlocks(again);
    await again.close();
    written.forEach((b, i) => expect(read[i]!.equals(b), `block ${i}`).toBe(true));
    // 40 blocks, 2.6 MB with their padding: one read per run of blocks, not one per block
    // (the first block, then the rest ahead of the host).
    expect(reads.mock.calls.length).toBeLessThanOrEqual(4);
  });
});
