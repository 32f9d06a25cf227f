import { describe, expect, it } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDirPerTest } from '../testing/temp-dir-per-test.js';
import { isDirectIoAligned, shareAlignedBuffer, takeAlignedBuffer } from './aligned-buffers.js';
import { giveBlockBuffer, takeBlockBuffer } from './block-buffers.js';
import { Cartridge, type ReadResult } from './cartridge.js';
import { IMAGE_FILES } from './layout.js';
import { mintCartridge } from './mint.js';

/** The streaming data path: recycled block buffers, read-ahead, index entries written behind. */

const tmp = tempDirPerTest();

const BLOCK = 256 * 1024;
const block = (fill: number) => Buffer.alloc(BLOCK, fill);

async function fresh(): Promise<{ dir: string; cart: Cartridge }> {
  const dir = await mintCartridge({ mediaDir: tmp.path, label: 'STR001L8', generation: 8 });
  const cart = await Cartridge.open(dir);
  await cart.spaceToEod();
  return { dir, cart };
}

function fillOf(r: ReadResult): number {
  if (r.kind !== 'data') throw new Error(`expected data, got ${r.kind}`);
  expect(r.data.length).toBe(BLOCK);
  return r.data[BLOCK - 1]!;
}

describe('block buffers', () => {
  /** Same memory; compared by identity so a failure does not diff whole slabs. */
  const sameMemory = (x: Buffer, y: Buffer) => x.buffer === y.buffer && x.byteOffset === y.byteOffset;

  it('reuses a returned block buffer, never lends one twice, and ignores foreign buffers', () => {
    const a = takeBlockBuffer(BLOCK);
    giveBlockBuffer(a);
    const b = takeBlockBuffer(BLOCK);
    expect(sameMemory(a, b)).toBe(true);
    // While b is lent, nobody else gets its memory, even after a foreign buffer is given.
    giveBlockBuffer(Buffer.alloc(BLOCK));
    const c = takeBlockBuffer(BLOCK);
    expect(sameMemory(b, c)).toBe(false);
    // Block buffers sit at aligned addresses, so the disk can write them directly.
    expect(isDirectIoAligned(b) && isDirectIoAligned(c)).toBe(true);
    giveBlockBuffer(b);
    giveBlockBuffer(c);
    // Small transfers are ordinary buffers.
    expect(takeBlockBuffer(512).length).toBe(512);
  });

  it('frees a slot shared by blocks read together only when every block is given back', () => {
    const run = takeAlignedBuffer(4 * BLOCK)!;
    const blocks = [0, 1, 2, 3].map((i) => run.subarray(i * BLOCK, (i + 1) * BLOCK));
    for (let i = 1; i < blocks.length; i++) shareAlignedBuffer(run);
    for (const b of blocks.slice(0, 3)) giveBlockBuffer(b);
    // One block is still held: its bytes are nobody else's.
    const other = takeAlignedBuffer(4 * BLOCK)!;
    expect(sameMemory(other, run)).toBe(false);
    giveBlockBuffer(blocks[3]!);
    giveBlockBuffer(other);
    const again = takeAlignedBuffer(4 * BLOCK)!;
    expect(sameMemory(again, run) || sameMemory(again, other)).toBe(true);
    giveBlockBuffer(again);
  });
});

describe('streaming reads and writes', () => {
  it('never hands out a read-ahead block that a later write replaced', async () => {
    const { cart } = await fresh();
    for (const fill of [1, 2, 3, 4]) await cart.writeBlock(block(fill));
    await cart.locate(2);
    expect(fillOf(await cart.readBlock(BLOCK))).toBe(1);
    // The next block (fill 2) is being read ahead now; overwrite it and read it back.
    await cart.locate(3);
    await cart.writeBlock(block(9));
    await cart.locate(3);
    expect(fillOf(await cart.readBlock(BLOCK))).toBe(9);
    expect((await cart.readBlock(BLOCK)).kind).toBe('eod');
    await cart.close();
  });

  it('reads a long sequence back in order across read-ahead and index windows', async () => {
    const { cart } = await fresh();
    const n = 1100;
    const small = (i: number) => Buffer.alloc(64 * 1024 + (i % 7), i & 0xff);
    for (let i = 0; i < n; i++) await cart.writeBlock(small(i));
    await cart.locate(2);
    for (let i = 0; i < n; i++) {
      const r = await cart.readBlock(1 << 20);
      if (r.kind !== 'data') throw new Error(`block ${i}: ${r.kind}`);
      expect(r.data.equals(small(i))).toBe(true);
      giveBlockBuffer(r.data);
    }
    await cart.close();
  });

  it('refuses a damaged block that comes through the read-ahead, after every good one before it', async () => {
    const { dir, cart } = await fresh();
    for (let fill = 1; fill <= 40; fill++) await cart.writeBlock(block(fill));
    await cart.close();
    const path = join(dir, IMAGE_FILES.data);
    const data = await readFile(path);
    const at = data.indexOf(Buffer.alloc(64, 30)) + 1000;
    data[at] = data[at]! ^ 0x01;
    await writeFile(path, data);

    const reopened = await Cartridge.open(dir);
    await reopened.locate(2);
    for (let fill = 1; fill < 30; fill++) expect(fillOf(await reopened.readBlock(BLOCK))).toBe(fill);
    await expect(reopened.readBlock(BLOCK)).rejects.toMatchObject({ reason: 'corrupt' });
    await reopened.close();
  });

  it('keeps every acknowledged block of a pipelined burst after a kill -9', async () => {
    const { dir, cart } = await fresh();
    // Several writes in flight: each one's index write overlaps the next one's data write.
    const acks = [1, 2, 3, 4, 5, 6, 7, 8].map((fill) => cart.writeBlock(block(fill)));
    await Promise.all(acks);
    await cart.abandon();
    const reopened = await Cartridge.open(dir);
    await reopened.locate(2);
    const fills: number[] = [];
    for (let r = await reopened.readBlock(BLOCK); r.kind === 'data'; r = await reopened.readBlock(BLOCK)) {
      fills.push(fillOf(r));
    }
    expect(fills).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    await reopened.close();
  });
});
