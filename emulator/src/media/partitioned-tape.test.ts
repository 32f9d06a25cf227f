import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../util/temp-dir.js';
import { cartridgeStats, makeStub } from './image.js';
import { readMeta } from './layout.js';
import { mintCartridge } from './mint.js';
import { PartitionedTape } from './partitioned-tape.js';

let tmp: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  tmp = await makeTempDir('vtl-parts-');
});
afterEach(async () => {
  await tmp.cleanup();
});

const GB = 1_000_000_000;

describe('partitioned cartridge images', () => {
  it('opens a format-1 image (every cartridge made before partitions) as one partition', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'OLD001L8', generation: 8 });
    expect((await readMeta(dir)).format).toBe(1);
    const tape = await PartitionedTape.open(dir);
    try {
      expect(tape.partitionCount).toBe(1);
      expect(tape.partitionCapacity(0)).toBe(12_000 * GB);
      const r = await tape.readBlock(80);
      expect(r.kind === 'data' && r.data.toString('ascii', 0, 4)).toBe('VOL1');
    } finally {
      await tape.close();
    }
  });

  it('formats into partitions kept across reopen, counted in the stats, all deleted by eviction', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'NEW001L8', generation: 8 });
    let tape = await PartitionedTape.open(dir);
    await tape.format([11_000 * GB, 1_000 * GB]);
    await tape.writeBlock(Buffer.from('zero'));
    await tape.changePartition(1);
    await tape.writeBlock(Buffer.from('one, longer'));
    await expect(tape.changePartition(2)).rejects.toMatchObject({ reason: 'invalid' });
    await tape.close();

    expect(await readMeta(dir)).toMatchObject({ format: 2, partitions: [11_000 * GB, 1_000 * GB] });
    expect((await cartridgeStats(dir)).size_bytes).toBe(4 + 11);
    tape = await PartitionedTape.open(dir);
    try {
      expect(tape.partitionCount).toBe(2);
      await tape.changePartition(1);
      const r = await tape.readBlock(100);
      expect(r.kind === 'data' && r.data.toString()).toBe('one, longer');
    } finally {
      await tape.close();
    }
    await makeStub(dir);
    expect((await readdir(dir)).sort()).toEqual(['mam.json', 'meta.json']);
  });

  it('refuses a meta.json of an unknown format or with more partitions than a tape has', async () => {
    const dir = await mintCartridge({ mediaDir: tmp.path, label: 'BAD001L8', generation: 8 });
    const meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(
      join(dir, 'meta.json'),
      JSON.stringify({ ...meta, format: 2, partitions: [1, 1, 1, 1, 1] }),
    );
    await expect(readMeta(dir)).rejects.toMatchObject({ reason: 'corrupt' });
    await writeFile(join(dir, 'meta.json'), JSON.stringify({ ...meta, format: 3 }));
    await expect(readMeta(dir)).rejects.toMatchObject({ reason: 'corrupt' });
  });
});
