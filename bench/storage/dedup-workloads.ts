import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeStreamImage } from '@vtl/emulator/testing/stream-image';
import { extentBytes } from '@vtl/nodeagent/storage/btrfs';
import { btrfsPool } from '../../emulator/bench/dist/btrfs-pool.js';
import { freshHashFile, startPass } from '../../emulator/bench/dist/dedup-pass.js';
import { command, dropCaches } from '../../emulator/bench/dist/processes.js';
import { parseSize } from '../../emulator/bench/dist/stats.js';
import { CDC_8K, type ChunkDedup, chunkDedup, chunkEnds, fixedBlocks } from './fastcdc.js';
import { TAPE_BLOCK, type Workload, headerEveryBlock, identicalFulls, tarTwice } from './workloads.js';

/**
 * `npm run bench:dedup -- [--size 256M] [--dir PARENT] [--block 262144] [--workloads 1,2,3]`: the dedup ratio of three realistic
 * workloads on the engine (btrfs + the nodeagent's duperemove pass) beside what content-defined
 * chunking would find on the same cartridge images (docs/storage.md, "What dedup finds").
 *
 * Each workload is two host streams of about `--size` bytes, written in 256 KiB blocks (`--block`:
 * another size, e.g. 65000, whose blocks are not 4 KiB multiples and are written padded to 4 KiB) through
 * the emulator's image writer (Cartridge.writeBlock, the code under the SCSI WRITE command) to
 * two cartridges on a compressing pool on btrfs over loop devices (set up here and torn down
 * after, as by the emulator bench). Then, per workload:
 *
 * - engine: the nodeagent's dedup pass (its duperemove arguments) over the first image alone
 *   from a fresh hash file, then over both (incremental, as the next scheduled pass would be);
 *   compsize's referenced / uncompressed bytes, as the pool reports its dedup_ratio;
 * - 4 KiB blocks: what sharing aligned 4 KiB blocks (btrfs's block) could find at best;
 * - FastCDC 8 KiB: unique chunks of a content-defined chunking (2 to 64 KiB, 8 KiB average)
 *   over the two data files, read back from the pool.
 *
 * Each ratio is given over the first stream alone and over both: repeats inside one backup
 * count in both figures, what the second backup adds shows in the step from one to the other.
 *
 * Prints figures; asserts nothing. Needs root, btrfs-progs, btrfs-compsize, duperemove, tar.
 */
const ratio = (d: ChunkDedup) => d.bytes / d.uniqueBytes;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** A dedup ratio over the first stream alone (last week's backup), and over both streams. */
interface Pair {
  alone: number;
  both: number;
}

const pair = (p: Pair) => `${p.alone.toFixed(2)}x → ${p.both.toFixed(2)}x`;

interface Row {
  workload: Workload;
  logical: number;
  compress: number;
  engine: Pair;
  allocated: number;
  passSeconds: number;
  extents: string;
  block4k: Pair;
  cdc: Pair;
  meanChunk: number;
}

/** compsize's extent count of some paths ("N regular extents (M refs)"): how the sharing went. */
async function extentCount(paths: string[]): Promise<string> {
  const out = await command('compsize', paths);
  return /(\d+ regular extents \(\d+ refs\))/.exec(out)?.[1] ?? '?';
}

async function measure(
  w: Workload,
  index: number,
  pool: { mountpoint: string; dir: string },
  blockBytes: number,
): Promise<Row> {
  const mediaDir = join(pool.dir, `w${index}`, 'lib');
  const dirs = [
    await writeStreamImage(mediaDir, `W${index}A00L8`, w.streams[0], blockBytes),
    await writeStreamImage(mediaDir, `W${index}B00L8`, w.streams[1], blockBytes),
  ];
  const filesOf = async (dir: string) => (await readdir(dir)).map((f) => join(dir, f));
  // Last week's backup is deduped on its own first, then this week's joins it (the hash file
  // keeps the first image's hashes, as the nodeagent's incremental passes do).
  await freshHashFile(pool.mountpoint);
  await dropCaches();
  await startPass(pool.mountpoint, await filesOf(dirs[0]!)).done;
  const first = await extentBytes([dirs[0]!]);
  await dropCaches();
  const both = [...(await filesOf(dirs[0]!)), ...(await filesOf(dirs[1]!))];
  const passSeconds = await startPass(pool.mountpoint, both).done;
  const after = await extentBytes(dirs);
  const data = await Promise.all(dirs.map((d) => readFile(join(d, 'data'))));
  const cdc = chunkDedup(data, (d) => chunkEnds(d, CDC_8K));
  return {
    workload: w,
    logical: after.referenced,
    compress: after.uncompressed / after.disk,
    engine: { alone: first.referenced / first.uncompressed, both: after.referenced / after.uncompressed },
    allocated: after.disk / after.referenced,
    passSeconds,
    extents: await extentCount(dirs),
    block4k: {
      alone: ratio(chunkDedup([data[0]!], fixedBlocks(4096))),
      both: ratio(chunkDedup(data, fixedBlocks(4096))),
    },
    cdc: { alone: ratio(chunkDedup([data[0]!], (d) => chunkEnds(d, CDC_8K))), both: ratio(cdc) },
    meanChunk: cdc.bytes / cdc.chunks,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: '256M' },
      dir: { type: 'string', default: '/var/tmp' },
      block: { type: 'string', default: String(TAPE_BLOCK) },
      workloads: { type: 'string', default: '1,2,3' },
    },
  });
  const bytes = parseSize(values.size);
  const blockBytes = Number(values.block);
  if (!Number.isInteger(blockBytes) || blockBytes < 1 || blockBytes > 16 * 2 ** 20)
    throw new Error('--block is a tape block size in bytes, 1 to 16 MiB');
  const chosen = new Set(values.workloads.split(',').map(Number));
  const scratch = await mkdtemp(join('/dev/shm', 'vtl-dedup-workloads-'));
  const pool = await btrfsPool(values.dir, Math.max(4 * 2 ** 30, 4 * bytes), 'zstd:3');
  const cleanUp = async () => {
    await pool.release();
    await rm(scratch, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)));
  try {
    console.log(
      `Workloads ${[...chosen].join(', ')} of ${mib(bytes)} per stream in ${blockBytes}-byte blocks on a zstd:3 ` +
        'btrfs pool over loop devices; load average ' +
        loadavg()
          .map((l) => l.toFixed(2))
          .join(' '),
    );
    const rows: Row[] = [];
    const workloads = [
      () => identicalFulls(bytes),
      () => tarTwice(bytes, scratch),
      async () => headerEveryBlock(bytes),
    ];
    for (const [i, make] of workloads.entries()) {
      if (!chosen.has(i + 1)) continue;
      const w = await make();
      const row = await measure(w, i + 1, pool, blockBytes);
      rows.push(row);
      console.log(
        `${w.name} (${w.what}): ${mib(row.logical)} written, compression ${row.compress.toFixed(2)}x; ` +
          `engine dedup (first stream alone → both) ${pair(row.engine)}, the pass over both ` +
          `${row.passSeconds.toFixed(1)} s, ${(row.allocated * 100).toFixed(0)} % of the written bytes ` +
          `allocated, ${row.extents}; aligned 4 KiB blocks ${pair(row.block4k)}; FastCDC 8 KiB ${pair(row.cdc)} ` +
          `(mean chunk ${(row.meanChunk / 1024).toFixed(1)} KiB)`,
      );
    }
    console.log('\nDedup ratios: over the first stream alone → over both streams.');
    console.log(
      '\n| Workload | Written (2 streams) | Compression | Engine dedup | Aligned 4 KiB blocks | FastCDC 8 KiB |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const r of rows)
      console.log(
        `| ${r.workload.name} (${r.workload.what}) | ${mib(r.logical)} | ${r.compress.toFixed(2)}x | ` +
          `${pair(r.engine)} | ${pair(r.block4k)} | ${pair(r.cdc)} |`,
      );
  } finally {
    await cleanUp();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
