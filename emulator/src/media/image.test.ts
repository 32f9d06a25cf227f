import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { tempDirPerTest } from '../testing/temp-dir-per-test.js';
import { Cartridge } from './cartridge.js';
import { cartridgeStats, deleteCartridge, isStub, listImages, makeStub, sweepMediaDir } from './image.js';
import { readMeta } from './layout.js';
import { mintCartridge } from './mint.js';
import { buildVol1, parseVol1 } from './vol1.js';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

const tmp = tempDirPerTest();

describe('VOL1 label', () => {
  it('is 80 ASCII bytes with the volume id at 4..9 and the version at 79', () => {
    const rec = buildVol1('ABC001');
    expect(rec.length).toBe(80);
    expect(rec.toString('ascii', 0, 10)).toBe('VOL1ABC001');
    expect(rec.toString('ascii', 79)).toBe('4');
    expect(parseVol1(rec)).toEqual({ volumeId: 'ABC001', owner: '', version: '4' });
    expect(parseVol1(Buffer.alloc(80))).toBeUndefined();
  });
});

describe('mint', () => {
  it('creates a labelled LTO image: VOL1, a filemark, native capacity, nothing left over', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'XYZ123L9', generation: 9 });
    const meta = await readMeta(dir);
    expect(meta).toMatchObject({
      label: 'XYZ123L9',
      generation: 9,
      density: 0x60,
      capacity_bytes: 18_000_000 * 1_000_000,
      write_protected: false,
      stub: false,
    });
    const cart = await Cartridge.open(dir);
    const first = await cart.readBlock(1024);
    expect(first.kind === 'data' && parseVol1(first.data)?.volumeId).toBe('XYZ123');
    expect(await cart.readBlock(1024)).toEqual({ kind: 'filemark' });
    expect(await cart.readBlock(1024)).toEqual({ kind: 'eod' });
    await cart.close();
    expect(await readdir(tmp.path)).toEqual(['XYZ123L9']);
    const stats = await cartridgeStats(dir);
    expect(stats.size_bytes).toBe(80);
    expect(stats.phys_bytes).toBeLessThan(64 * 1024);
    expect(await listImages(tmp.path)).toEqual(['XYZ123L9']);
  });

  it('refuses a label that already has an image and leaves the first intact', async () => {
    await mintCartridge({ mediaDir: tmp.path, label: 'XYZ123L9', generation: 9 });
    await expect(
      mintCartridge({ mediaDir: tmp.path, label: 'XYZ123L9', generation: 9 }),
    ).rejects.toMatchObject({
      reason: 'exists',
    });
    expect(await readdir(tmp.path)).toEqual(['XYZ123L9']);
    await expect(
      mintCartridge({ mediaDir: tmp.path, label: 'XYZ124L2', generation: 2 }),
    ).rejects.toMatchObject({
      reason: 'invalid',
    });
  });
});

describe('stub and delete', () => {
  it('evicts to a labelled stub that refuses I/O, idempotently', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'STB001L8', generation: 8 });
    await makeStub(dir);
    await makeStub(dir);
    expect(await isStub(dir)).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['mam.json', 'meta.json']);
    await expect(Cartridge.open(dir)).rejects.toMatchObject({ reason: 'stub' });
    const stats = await cartridgeStats(dir);
    expect(stats).toMatchObject({ size_bytes: 0, stub: true });
    expect(await listImages(tmp.path)).toEqual(['STB001L8']);
  });

  it('deletes an image and sweeps what interrupted mints left', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'DEL001L8', generation: 8 });
    await mkdir(join(tmp.path, '.mint-DEL002L8-abcd'));
    await deleteCartridge(dir);
    await deleteCartridge(dir);
    expect(await sweepMediaDir(tmp.path)).toEqual(['.mint-DEL002L8-abcd']);
    expect(await readdir(tmp.path)).toEqual([]);
    await expect(cartridgeStats(dir)).rejects.toMatchObject({ reason: 'not_found' });
  });
});
