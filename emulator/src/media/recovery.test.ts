import { open, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirPerTest } from '../testing/temp-dir-per-test.js';
import { Cartridge } from './cartridge.js';
import { ENTRY_SIZE, HEADER_SIZE } from './index-file.js';
import { IMAGE_FILES } from './layout.js';
import { mintCartridge } from './mint.js';

const tmp = tempDirPerTest();

const block = (n: number, fill: number) => Buffer.alloc(n, fill);

/**
 * A cartridge with VOL1, FM, 3 synced blocks (objects 2..4), then 2 blocks written but never
 * synced (objects 5, 6), abandoned as a killed process would leave it.
 */
async function crashedImage(): Promise<string> {
  const dir = await mintCartridge({ mediaDir: tmp.path, label: 'CRS001L8', generation: 8 });
  const cart = await Cartridge.open(dir);
  await cart.spaceToEod();
  for (const fill of [1, 2, 3]) await cart.writeBlock(block(1000, fill));
  await cart.sync();
  await cart.writeBlock(block(1000, 4));
  await cart.writeBlock(block(1000, 5));
  await cart.abandon();
  return dir;
}

async function readAll(cart: Cartridge): Promise<number[]> {
  await cart.locate(2);
  const fills: number[] = [];
  for (;;) {
    const r = await cart.readBlock(4096);
    if (r.kind !== 'data') break;
    fills.push(r.data[0]!);
  }
  return fills;
}

describe('crash recovery', () => {
  it('keeps unsynced records that were fully written (kill -9 keeps the page cache)', async () => {
    const dir = await crashedImage();
    const cart = await Cartridge.open(dir);
    expect(await readAll(cart)).toEqual([1, 2, 3, 4, 5]);
    await cart.close();
  });

  it('drops a record whose data was torn mid-write and cuts the data file', async () => {
    const dir = await crashedImage();
    await truncate(join(dir, IMAGE_FILES.data), 80 + 4 * 1000 + 500);
    const cart = await Cartridge.open(dir);
    expect(await readAll(cart)).toEqual([1, 2, 3, 4]);
    expect(cart.sizeBytes).toBe(80 + 4000);
    expect((await stat(join(dir, IMAGE_FILES.data))).size).toBe(80 + 4000);
    // The tape goes on from the repaired end.
    await cart.spaceToEod();
    await cart.writeBlock(block(10, 9));
    expect(await readAll(cart)).toEqual([1, 2, 3, 4, 9]);
    await cart.close();
  });

  it('cuts data written after the last index entry (crash between data and index write)', async () => {
    const dir = await crashedImage();
    await truncate(join(dir, IMAGE_FILES.index), HEADER_SIZE + 6 * ENTRY_SIZE);
    const cart = await Cartridge.open(dir);
    expect(await readAll(cart)).toEqual([1, 2, 3, 4]);
    expect((await stat(join(dir, IMAGE_FILES.data))).size).toBe(80 + 4000);
    await cart.close();
  });

  it('ignores a partially written index entry', async () => {
    const dir = await crashedImage();
    await truncate(join(dir, IMAGE_FILES.index), HEADER_SIZE + 6 * ENTRY_SIZE + 10);
    const cart = await Cartridge.open(dir);
    expect(await readAll(cart)).toEqual([1, 2, 3, 4]);
    expect((await stat(join(dir, IMAGE_FILES.index))).size).toBe(HEADER_SIZE + 6 * ENTRY_SIZE);
    await cart.close();
  });

  it('drops an unsynced record whose bytes never reached the disk (checksum mismatch)', async () => {
    const dir = await crashedImage();
    // A power loss can leave the file extended but the block's pages zero.
    const fh = await open(join(dir, IMAGE_FILES.data), 'r+');
    await fh.write(block(1000, 0), 0, 1000, 80 + 3000);
    await fh.close();
    const cart = await Cartridge.open(dir);
    expect(await readAll(cart)).toEqual([1, 2, 3]);
    await cart.close();
  });

  it('opens a cleanly synced image without touching its data', async () => {
    const dir = await crashedImage();
    const repaired = await Cartridge.open(dir);
    await repaired.close();
    // Corrupting a synced block is not noticed at open (no scan), only when the block is read.
    const fh = await open(join(dir, IMAGE_FILES.data), 'r+');
    await fh.write(block(1000, 0), 0, 1000, 80);
    await fh.close();
    const cart = await Cartridge.open(dir);
    expect(cart.objectCount).toBe(7);
    await cart.locate(2);
    await expect(cart.readBlock(4096)).rejects.toMatchObject({ reason: 'corrupt' });
    await cart.close();
  });
});
