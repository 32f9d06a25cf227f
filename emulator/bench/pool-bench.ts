import { readdir, stat } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { extentBytes } from '@vtl/nodeagent/storage/btrfs';
import { btrfsPool } from './btrfs-pool.js';
import { freshHashFile, startPass } from './dedup-pass.js';
import { type Contender, type ContenderOptions, emulatorDrives } from './contenders.js';
import { contentMatches, fioContent } from './fio-content.js';
import { fio } from './fio.js';
import { type RunResult, dropCaches, machineBusySeconds, onPath } from './processes.js';
import { formatSize, median, mibPerSecond } from './stats.js';
import { BLOCKS } from './summary.js';
import { compareShapes, extentShape } from './extent-shape.js';

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** Issue 31's bars: the emulator's writes and a host stream during a dedup pass, each at 0.9 x. */
const TARGET = 0.9;

export interface PoolBenchOptions {
  bytes: number;
  rounds: number;
  compression: string;
  /** Where the loop devices' files go (their size is sparse until written). */
  parent: string;
  emulatorNodeFlags: string[];
  maxBurst: number;
}

/**
 * One write: its rate and CPU ms per GiB of the writer (fio, or the emulator's process), of the
 * emulator's initiator (a host's work, here on the same cores; none for fio), and of the whole
 * machine.
 */
interface WriteFigures {
  rate: number;
  writerMsPerGiB: number;
  initiatorMsPerGiB: number;
  machineMsPerGiB: number;
}

/**
 * A write with the machine's CPU over it: btrfs compresses in kernel worker threads that
 * neither the emulator nor fio is charged for, so the machine's busy time is the honest cost
 * (it includes any other work on the machine; uptime is printed with the figures).
 */
async function timedWrite(
  c: Contender,
  block: number,
  bytes: number,
): Promise<WriteFigures & { r: RunResult }> {
  await dropCaches();
  const busyBefore = machineBusySeconds();
  const r = await c.write({ block, bytes, depth: 1 });
  const machine = machineBusySeconds() - busyBefore;
  const gib = r.bytes / 2 ** 30;
  return {
    r,
    rate: mibPerSecond(r.bytes, r.seconds),
    writerMsPerGiB: ((r.targetCpuSeconds ?? r.cpuSeconds) * 1000) / gib,
    initiatorMsPerGiB: r.targetCpuSeconds === undefined ? NaN : (r.cpuSeconds * 1000) / gib,
    machineMsPerGiB: (machine * 1000) / gib,
  };
}

/** Files of the cartridge directories (what the product's pass hands duperemove) and their bytes. */
async function imageFiles(dirs: string[]): Promise<{ files: string[]; bytes: number }> {
  const files: string[] = [];
  let bytes = 0;
  for (const dir of dirs)
    for (const e of await readdir(dir, { withFileTypes: true }))
      if (e.isFile()) {
        files.push(join(dir, e.name));
        bytes += (await stat(join(dir, e.name))).size;
      }
  return { files, bytes };
}

/**
 * `npm run bench:emulator -- --pool btrfs`: issue 31's storage figures on a compressing pool
 * set up on btrfs over two loop devices (torn down at the end).
 *
 * 1. Writes: the emulator (one drive, Linux st's one command in flight) against fio (O_DIRECT,
 *    libaio, no preallocation: a preallocated extent is never compressed) writing the same
 *    bytes to the same pool, for 256 KiB and 1 MiB blocks, alternating order, medians of the
 *    per-round ratios; CPU per GiB of each writer's processes and of the whole machine.
 * 2. The dedup pass: two cartridges written with the same stream, then the nodeagent's pass
 *    (its duperemove arguments) over both: GiB scanned per minute and the dedup ratio reached.
 * 3. A host stream (the emulator's third drive) alone and during a pass over those two
 *    cartridges (each pass from a fresh hash file, so it reads everything again).
 *
 * Prints figures; asserts nothing.
 */
export async function poolBench(o: PoolBenchOptions): Promise<void> {
  for (const tool of ['fio', 'duperemove', 'compsize', 'mkfs.btrfs', 'losetup', 'cmp'])
    if (!(await onPath(tool, ['/usr/sbin', '/sbin'])))
      throw new Error(`${tool} is not installed (apt-get install fio duperemove btrfs-compsize btrfs-progs)`);
  // Two devices: rounds rewrite two files in place; the dedup part adds three cartridges.
  const deviceBytes = Math.max(4 * 2 ** 30, 4 * o.bytes);
  const pool = await btrfsPool(o.parent, deviceBytes, o.compression);
  const content = await fioContent(o.bytes, BLOCKS).catch(async (err: unknown) => {
    await pool.release();
    throw err;
  });
  let stop = async () => undefined as unknown;
  const cleanUp = async () => {
    await stop().catch(() => undefined);
    await content.release();
    await pool.release();
  };
  process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)));
  try {
    const opts: ContenderOptions = {
      dir: pool.dir,
      bytes: o.bytes,
      emulatorNodeFlags: o.emulatorNodeFlags,
      maxBurst: o.maxBurst,
      content,
    };
    const target = await emulatorDrives(opts, 3);
    const emu = target.on([0]);
    stop = emu.stop;
    const fio1 = fio(opts);
    console.log(
      `btrfs pool (compression ${o.compression}) on two loop devices of ${formatSize(deviceBytes)} under ${o.parent}; ` +
        `${formatSize(o.bytes)} per write, ${o.rounds} rounds, one command in flight; fio's content ` +
        `(${content.fioArgs.join(' ')}) replayed byte for byte by the emulator's initiator`,
    );
    console.log(
      `Machine load average before: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );

    // Untimed warm-up; then one check that both wrote the very same bytes.
    for (const block of BLOCKS)
      for (const c of [emu, fio1]) await c.write({ block, bytes: o.bytes, depth: 1 });
    const last = content.file(BLOCKS[BLOCKS.length - 1]!);
    const same =
      (await contentMatches(join(pool.dir, 'fio-1-0.bin'), last)) &&
      (await contentMatches(join(target.cartridgeDirs[0]!, 'data'), last));
    console.log(`fio's file and the emulator's data file hold the same bytes: ${same ? 'yes' : 'NO'}`);
    const compressed = await extentBytes([pool.dir]);
    console.log(
      `compsize over the pool: ${mib(compressed.uncompressed)} written, ${(compressed.uncompressed / compressed.disk).toFixed(2)}x compression`,
    );

    const figures = new Map<string, WriteFigures[]>();
    const ratios = new Map<number, number[]>();
    for (let round = 1; round <= o.rounds; round++)
      for (const block of BLOCKS) {
        const order = round % 2 === 1 ? [emu, fio1] : [fio1, emu];
        const got = new Map<string, WriteFigures>();
        for (const c of order) {
          const f = await timedWrite(c, block, o.bytes);
          got.set(c.name, f);
          figures.set(`${block}/${c.name}`, [...(figures.get(`${block}/${c.name}`) ?? []), f]);
          console.log(
            `round ${round}  ${formatSize(block).padStart(7)}  write  ${c.name.padEnd(9)} ${f.rate.toFixed(1).padStart(7)} MiB/s  ` +
              `CPU ${f.writerMsPerGiB.toFixed(0)} ms/GiB` +
              (Number.isFinite(f.initiatorMsPerGiB) ? ` + initiator ${f.initiatorMsPerGiB.toFixed(0)}` : '') +
              ` (machine ${f.machineMsPerGiB.toFixed(0)} ms/GiB)`,
          );
        }
        ratios.set(block, [...(ratios.get(block) ?? []), got.get(emu.name)!.rate / got.get(fio1.name)!.rate]);
      }
    console.log(
      "\nMedians (CPU in ms per GiB: of the emulator's process or fio; ini: the emulator's initiator, " +
        "a host's work on these cores; machine: every core, the kernel's compression and other work included)",
    );
    console.log(
      'block     emulator MiB/s  fio MiB/s  emu/fio  emu CPU  ini CPU  fio CPU  emu machine  fio machine',
    );
    const col = (n: number, width: number, digits = 0) => n.toFixed(digits).padStart(width);
    for (const block of BLOCKS) {
      const med = (name: string, pick: (f: WriteFigures) => number) =>
        median((figures.get(`${block}/${name}`) ?? []).map(pick));
      const ratio = median(ratios.get(block) ?? []);
      console.log(
        [
          formatSize(block).padEnd(9),
          col(
            med(emu.name, (f) => f.rate),
            14,
            1,
          ),
          col(
            med(fio1.name, (f) => f.rate),
            10,
            1,
          ),
          col(ratio, 8, 2),
          col(
            med(emu.name, (f) => f.writerMsPerGiB),
            8,
          ),
          col(
            med(emu.name, (f) => f.initiatorMsPerGiB),
            8,
          ),
          col(
            med(fio1.name, (f) => f.writerMsPerGiB),
            8,
          ),
          col(
            med(emu.name, (f) => f.machineMsPerGiB),
            12,
          ),
          col(
            med(fio1.name, (f) => f.machineMsPerGiB),
            12,
          ),
          ` target emu/fio >= ${TARGET}: ${ratio >= TARGET ? 'met' : 'NOT met'}`,
        ].join(' '),
      );
    }

    // The dedup pass: two cartridges with the same 1 MiB-block stream, shared by the product's pass.
    const block = BLOCKS[BLOCKS.length - 1]!;
    await target.on([0, 1]).write({ block, bytes: o.bytes, depth: 1 });
    const pair = await imageFiles(target.cartridgeDirs.slice(0, 2));
    // Written at once by two drives: their extents must not depend on which got the CPU when.
    const [shapeA, shapeB] = await Promise.all(
      target.cartridgeDirs.slice(0, 2).map((dir) => extentShape(join(dir, 'data'))),
    );
    console.log(`\nThe two cartridges' data files before the pass: ${compareShapes(shapeA!, shapeB!)}`);
    await freshHashFile(pool.mountpoint);
    await dropCaches();
    const first = await startPass(pool.mountpoint, pair.files).done;
    const shared = await extentBytes(target.cartridgeDirs.slice(0, 2));
    console.log(
      `Dedup pass over two cartridges with the same ${formatSize(o.bytes)} stream (${mib(pair.bytes)} of image files): ` +
        `${first.toFixed(1)} s, ${(pair.bytes / 2 ** 30 / (first / 60)).toFixed(2)} GiB scanned per minute; ` +
        `dedup ratio ${(shared.referenced / shared.uncompressed).toFixed(2)}, ` +
        `${mib(shared.disk)} on disk for ${mib(shared.referenced)} referenced`,
    );

    // A host stream alone and during a pass, alternating which comes first.
    const host = target.on([2]);
    const during: number[] = [];
    const passRates: number[] = [];
    for (let round = 1; round <= o.rounds; round++) {
      const alone = async () => (await timedWrite(host, block, o.bytes)).rate;
      const withPass = async () => {
        await freshHashFile(pool.mountpoint);
        await dropCaches();
        // Paced as the nodeagent paces it, by a counter of the host drive's bytes: here the size
        // of its cartridge's files (the bench's emulator serves no status with iSCSI counters).
        const hostBytes = async () => (await imageFiles([target.cartridgeDirs[2]!])).bytes;
        const pass = startPass(pool.mountpoint, pair.files, hostBytes);
        const f = await timedWrite(host, block, o.bytes);
        const overlapped = pass.running();
        const seconds = await pass.done;
        passRates.push(pair.bytes / 2 ** 30 / (seconds / 60));
        return { rate: f.rate, overlapped, seconds, paused: pass.pausedSeconds() };
      };
      const a = round % 2 === 1 ? await alone() : undefined;
      const d = await withPass();
      const alone2 = a ?? (await alone());
      during.push(d.rate / alone2);
      console.log(
        `round ${round}  host stream alone ${alone2.toFixed(1)} MiB/s, during a pass ${d.rate.toFixed(1)} MiB/s ` +
          `(${(d.rate / alone2).toFixed(2)}x; the pass took ${d.seconds.toFixed(1)} s, ${d.paused.toFixed(1)} s of it paused` +
          `${d.overlapped ? ' and outlasted the stream' : ', ending BEFORE the stream did'})`,
      );
    }
    const ratio = median(during);
    console.log(
      `\nHost stream during a dedup pass: ${ratio.toFixed(2)} x alone (median of ${o.rounds}); target >= ${TARGET}: ` +
        `${ratio >= TARGET ? 'met' : 'NOT met'}. Pass rate with a host stream beside it: ` +
        `${median(passRates).toFixed(2)} GiB scanned per minute`,
    );
  } finally {
    await cleanUp();
  }
}
