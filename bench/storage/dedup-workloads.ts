import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Cartridge, cartridgeDir, mintCartridge } from '@vtl/emulator';
import { extentBytes } from '@vtl/nodeagent/dist/storage/btrfs.js';
import { btrfsPool } from '../../emulator/bench/dist/btrfs-pool.js';
import { freshHashFile, startPass } from '../../emulator/bench/dist/dedup-pass.js';
import { dropCaches } from '../../emulator/bench/dist/processes.js';
import { parseSize } from '../../emulator/bench/dist/stats.js';
import { CDC_8K, type ChunkDedup, chunkDedup, chunkEnds, fixedBlocks } from './fastcdc.js';
import { TAPE_BLOCK, type Workload, headerEveryBlock, identicalFulls, tarTwice } from './workloads.js';

/**
 * `npm run bench:dedup -- [--size 256M] [--dir PARENT]`: the dedup ratio of three realistic
 * workloads on the engine (btrfs + the nodeagent's duperemove pass) beside what content-defined
 * chunking would find on the same cartridge images (docs/storage.md, "What dedup finds").
 *
 * Each workload is two host streams of about `--size` bytes, written in 256 KiB blocks through
 * the emulator's image writer (Cartridge.writeBlock, the code under the SCSI WRITE command) to
 * two cartridges on a compressing pool on btrfs over loop devices (set up here and torn down
 * after, as by the emulator bench). Then, per workload:
 *
 * - engine: the nodeagent's dedup pass (its duperemove arguments) over both images, from a
 *   fresh hash file; compsize's referenced / uncompressed bytes of both, as the pool reports it;
 * - 4 KiB blocks: what sharing aligned 4 KiB blocks (btrfs's block) could find at best;
 * - FastCDC 8 KiB: unique chunks of a content-defined chunking (2 to 64 KiB, 8 KiB average)
 *   over the two data files, read back from the pool.
 *
 * Prints figures; asserts nothing. Needs root, btrfs-progs, btrfs-compsize, duperemove, tar.
 */
const ratio = (d: ChunkDedup) => d.bytes / d.uniqueBytes;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** Writes a stream in tape blocks to a new cartridge, from BOT, with a closing filemark. */
async function writeImage(mediaDir: string, label: string, stream: Buffer): Promise<string> {
  await mintCartridge({ mediaDir, label, generation: 8 });
  const dir = cartridgeDir(mediaDir, label);
  const cart = await Cartridge.open(dir);
  try {
    for (let at = 0; at < stream.length; at += TAPE_BLOCK)
      await cart.writeBlock(stream.subarray(at, Math.min(at + TAPE_BLOCK, stream.length)));
    await cart.writeFilemarks(1);
  } finally {
    await cart.close();
  }
  return dir;
}

interface Row {
  workload: Workload;
  logical: number;
  compress: number;
  engine: number;
  allocated: number;
  passSeconds: number;
  block4k: number;
  cdc: number;
  meanChunk: number;
}

async function measure(w: Workload, index: number, pool: { mountpoint: string; dir: string }): Promise<Row> {
  const mediaDir = join(pool.dir, `w${index}`, 'lib');
  const dirs = [
    await writeImage(mediaDir, `W${index}A00L8`, w.streams[0]),
    await writeImage(mediaDir, `W${index}B00L8`, w.streams[1]),
  ];
  const files: string[] = [];
  for (const dir of dirs) for (const f of await readdir(dir)) files.push(join(dir, f));
  await freshHashFile(pool.mountpoint);
  await dropCaches();
  const passSeconds = await startPass(pool.mountpoint, files).done;
  const after = await extentBytes(dirs);
  const data = await Promise.all(dirs.map((d) => readFile(join(d, 'data'))));
  const cdc = chunkDedup(data, (d) => chunkEnds(d, CDC_8K));
  return {
    workload: w,
    logical: after.referenced,
    compress: after.uncompressed / after.disk,
    engine: after.referenced / after.uncompressed,
    allocated: after.disk / after.referenced,
    passSeconds,
    block4k: ratio(chunkDedup(data, fixedBlocks(4096))),
    cdc: ratio(cdc),
    meanChunk: cdc.bytes / cdc.chunks,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { size: { type: 'string', default: '256M' }, dir: { type: 'string', default: '/var/tmp' } },
  });
  const bytes = parseSize(values.size);
  const scratch = await mkdtemp(join('/dev/shm', 'vtl-dedup-workloads-'));
  const pool = await btrfsPool(values.dir, Math.max(4 * 2 ** 30, 4 * bytes), 'zstd:3');
  process.once('SIGINT', () => void pool.release().finally(() => process.exit(130)));
  try {
    console.log(
      `Three workloads of ${mib(bytes)} per stream on a zstd:3 btrfs pool over loop devices; load average ` +
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
      const w = await make();
      const row = await measure(w, i + 1, pool);
      rows.push(row);
      console.log(
        `${w.name} (${w.what}): ${mib(row.logical)} written, compression ${row.compress.toFixed(2)}x; ` +
          `engine dedup ${row.engine.toFixed(2)}x after a ${row.passSeconds.toFixed(1)} s pass ` +
          `(${(row.allocated * 100).toFixed(0)} % of the written bytes allocated); ` +
          `aligned 4 KiB blocks ${row.block4k.toFixed(2)}x; FastCDC 8 KiB ${row.cdc.toFixed(2)}x ` +
          `(mean chunk ${(row.meanChunk / 1024).toFixed(1)} KiB)`,
      );
    }
    console.log(
      '\n| Workload | Written (2 streams) | Compression | Engine dedup | Aligned 4 KiB blocks | FastCDC 8 KiB |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const r of rows)
      console.log(
        `| ${r.workload.name} (${r.workload.what}) | ${mib(r.logical)} | ${r.compress.toFixed(2)}x | ` +
          `${r.engine.toFixed(2)}x | ${r.block4k.toFixed(2)}x | ${r.cdc.toFixed(2)}x |`,
      );
  } finally {
    await pool.release();
    await rm(scratch, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
