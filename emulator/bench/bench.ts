import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type Contender,
  EMULATOR_NODE_FLAGS,
  LINUX_MAX_BURST,
  emulator,
  rawFile,
  tgt,
  tgtInstalled,
} from './contenders.js';
import { fio } from './fio.js';
import { loopback } from './loopback.js';
import { poolBench } from './pool-bench.js';
import { dropCaches, onPath } from './processes.js';
import { formatSize, mibPerSecond, parseSize } from './stats.js';
import { BLOCKS, type Figures, OPS, type Op, TWO_DRIVE_DEPTH, key, printSummary, push } from './summary.js';

/**
 * `npm run bench:emulator -- --pool btrfs [--size 1G] [--rounds 5] [--compression zstd:3]
 *   [--dir PARENT]`: the emulator on a compressing btrfs pool against fio writing the same
 * bytes, and the dedup pass's rate and its effect on a host stream (pool-bench.ts).
 *
 * `npm run bench:emulator -- [--size 2G] [--rounds 9] [--depths 1,4] [--no-two-drives]
 *   [--dir PATH] [--keep] [--emulator-node-flags '--initial-heap-size=64'] [--max-burst 16776192]`
 *
 * Sequential WRITE(6)/READ(6) of `--size` bytes through the emulator's iSCSI target with
 * 256 KiB and 1 MiB blocks at each queue depth of `--depths` (1: what Linux `st` keeps in
 * flight per drive; 4: several outstanding commands, as the bench's libiscsi initiator issues
 * them with its async API), beside fio with O_DIRECT on the same file system (the disk's
 * limit, same block size and depth), raw file I/O (depth 1 only: it is synchronous), tgt's
 * tape emulation under the same initiator, and bare loopback TCP in C (the transport's limit,
 * loopback.ts). Then two drives streaming at once against one drive and against fio (and
 * TCP) with two streams, at depth 1. The disk's speed drifts a lot between runs, so
 * contenders run back to back in alternating order and the summary gives medians of the
 * ratios within each round, not ratios of medians. The initiator logs in as Linux's would as to
 * MaxBurstLength (`--max-burst`), so a 1 MiB WRITE takes one R2T, not libiscsi's three.
 */
const WARM_UP_BYTES = 64 * 1024 * 1024;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      pool: { type: 'string', default: 'dir' },
      compression: { type: 'string', default: 'zstd:3' },
      size: { type: 'string' },
      rounds: { type: 'string' },
      depths: { type: 'string', default: '1,4' },
      'no-two-drives': { type: 'boolean', default: false },
      dir: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'emulator-node-flags': { type: 'string', default: EMULATOR_NODE_FLAGS.join(' ') },
      'max-burst': { type: 'string', default: String(LINUX_MAX_BURST) },
    },
  });
  const emulatorNodeFlags = values['emulator-node-flags'].split(/\s+/).filter(Boolean);
  const onBtrfs = values.pool === 'btrfs';
  if (!onBtrfs && values.pool !== 'dir') throw new Error('--pool is dir (a directory, the default) or btrfs');
  const bytes = parseSize(values.size ?? (onBtrfs ? '1G' : '2G'));
  const rounds = Number(values.rounds ?? (onBtrfs ? '5' : '9'));
  const depths = values.depths.split(',').map(Number);
  const twoDrives = !values['no-two-drives'];
  if (!(rounds >= 1) || !depths.every((d) => Number.isInteger(d) && d >= 1)) {
    throw new Error('--rounds is a positive integer, --depths a list of them (e.g. 1,4)');
  }
  const maxBurst = Number(values['max-burst']);
  if (!Number.isInteger(maxBurst) || maxBurst < 512 || maxBurst > 16777215) {
    throw new Error('--max-burst is a MaxBurstLength in bytes, 512 to 16777215 (RFC 7143)');
  }
  if (onBtrfs) {
    if (!(rounds >= 1)) throw new Error('--rounds is a positive integer');
    const parent = values.dir ?? '/var/tmp';
    await poolBench({ bytes, rounds, compression: values.compression, parent, emulatorNodeFlags, maxBurst });
    return;
  }
  if (!(await tgtInstalled()) || !(await onPath('fio')) || !(await onPath('cc'))) {
    process.stderr.write(
      'tgt (tgtd, tgtadm, tgtimg) and fio are the comparison targets, and a C compiler builds the ' +
        'loopback TCP ceiling; one is not installed.\n' +
        'Install them with: sudo apt-get install -y tgt fio build-essential   (Debian/Ubuntu), then run this as root.\n',
    );
    process.exit(2);
  }
  const dir = values.dir ?? (await mkdtemp(join(tmpdir(), 'vtl-bench-')));
  const cold = await dropCaches();
  console.log(
    `Sequential ${formatSize(bytes)} per stream and run, ${rounds} rounds, depths ${depths.join(', ')}, in ${dir}; ` +
      (cold
        ? 'sync + drop_caches before every run'
        : 'NOT root: page cache not dropped, reads may come from memory'),
  );
  console.log(`Emulator process: node ${emulatorNodeFlags.join(' ')} emulator-target.js --drives 2`);
  console.log(
    `The initiator offers MaxBurstLength ${maxBurst} at login (--max-burst; Linux's open-iscsi offers ` +
      `${LINUX_MAX_BURST}, libiscsi on its own 262144); each target answers its own limit`,
  );
  const opts = { dir, bytes, emulatorNodeFlags, maxBurst };
  const contenders: Contender[] = [];
  const stopAll = async () => {
    for (const c of contenders.splice(0)) await c.stop().catch(() => undefined);
  };
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));
  const throughput: Figures = new Map();
  const targetCpu: Figures = new Map();
  const workerCpu: Figures = new Map();
  const machineBusy: Figures = new Map();
  const mainThreadBusy: Figures = new Map();
  const kernelShare: Figures = new Map();
  const ratios: Figures = new Map();
  try {
    // Each one with a process is listed as soon as it runs, so the finally block stops it.
    const [emu, emu2] = await emulator(opts);
    contenders.push(emu, emu2);
    const tgtd = await tgt(opts);
    contenders.push(tgtd);
    const [raw, fio1, fio2] = [await rawFile(opts), fio(opts), fio(opts, 2)];
    const [tcp1, tcp2] = [await loopback(opts), await loopback(opts, 2)];
    contenders.push(raw, fio1, fio2, tcp1, tcp2);
    // Untimed: JIT warm-up of the emulator and first-touch allocation of every file.
    const warmUp = { bytes: Math.min(bytes, WARM_UP_BYTES), depth: 1 };
    for (const c of contenders) {
      if (c.streams > 1 && !twoDrives) continue;
      for (const block of BLOCKS) {
        const { maxBurst: negotiated } = await c.write({ ...warmUp, block });
        await c.read({ ...warmUp, block });
        if (negotiated !== undefined && block === BLOCKS[0])
          console.log(`${c.name}: MaxBurstLength ${negotiated} after login`);
      }
    }
    const measure = async (round: number, depth: number, block: number, op: Op, group: Contender[]) => {
      // A B C D, then D C B A: no contender always runs right after another's writeback.
      const order = round % 2 === 1 ? group : [...group].reverse();
      const got = new Map<string, number>();
      for (const c of order) {
        await dropCaches();
        const r = await c[op]({ block, bytes, depth });
        const rate = mibPerSecond(r.bytes, r.seconds);
        got.set(c.name, rate);
        push(throughput, key(depth, block, op, c.name), rate);
        const cpu = r.targetCpuSeconds;
        const perGiB = (seconds: number) => (seconds * 1000) / (r.bytes / 2 ** 30);
        if (cpu !== undefined && Number.isFinite(cpu))
          push(targetCpu, key(depth, block, op, c.name), perGiB(cpu));
        push(workerCpu, key(depth, block, op, c.name), perGiB(r.cpuSeconds));
        if (cpu !== undefined && r.targetSystemSeconds !== undefined && r.systemSeconds !== undefined)
          push(
            kernelShare,
            key(depth, block, op, c.name),
            (r.targetSystemSeconds + r.systemSeconds) / (cpu + r.cpuSeconds),
          );
        if (r.machineBusyCores !== undefined)
          push(machineBusy, key(depth, block, op, c.name), r.machineBusyCores);
        // Its share of the stream (the thread has next to nothing to do before and after it).
        const streamSeconds = r.seconds - (r.syncSeconds ?? 0);
        if (r.targetMainThreadCpuSeconds !== undefined)
          push(mainThreadBusy, key(depth, block, op, c.name), r.targetMainThreadCpuSeconds / streamSeconds);
        console.log(
          `round ${round}  qd${depth}  ${formatSize(block).padStart(7)}  ${op.padEnd(5)}  ${c.name.padEnd(11)} ` +
            `${rate.toFixed(1).padStart(7)} MiB/s  (${r.seconds.toFixed(2).padStart(6)} s` +
            (cpu !== undefined ? `, target CPU ${cpu.toFixed(2)} s` : '') +
            ')',
        );
      }
      return got;
    };
    for (let round = 1; round <= rounds; round++) {
      const oneStream = new Map<string, Map<string, number>>();
      for (const depth of depths) {
        for (const block of BLOCKS) {
          for (const op of OPS) {
            const group = depth === 1 ? [raw, fio1, emu, tgtd, tcp1] : [fio1, emu, tgtd, tcp1];
            const got = await measure(round, depth, block, op, group);
            if (depth === TWO_DRIVE_DEPTH) oneStream.set(`${block}/${op}`, got);
            const e = got.get(emu.name)!;
            push(ratios, key(depth, block, op, 'vs fio'), e / got.get(fio1.name)!);
            push(ratios, key(depth, block, op, 'vs tgt'), e / got.get(tgtd.name)!);
            if (depth === 1) push(ratios, key(depth, block, op, 'vs raw'), e / got.get(raw.name)!);
            push(ratios, key(depth, block, op, 'tcp vs fio'), got.get(tcp1.name)! / got.get(fio1.name)!);
          }
        }
      }
      if (!twoDrives) continue;
      for (const block of BLOCKS) {
        for (const op of OPS) {
          const d = TWO_DRIVE_DEPTH;
          const got = await measure(round, d, block, op, [fio2, emu2, tcp2]);
          // Paired with the same round's one-stream runs at this depth (measured when the depth ran).
          const one = oneStream.get(`${block}/${op}`);
          if (one) {
            push(ratios, key(d, block, op, 'x2 vs x1'), got.get(emu2.name)! / one.get(emu.name)!);
            push(ratios, key(d, block, op, 'fio x2 vs x1'), got.get(fio2.name)! / one.get(fio1.name)!);
          }
          push(ratios, key(d, block, op, 'x2 vs fio x2'), got.get(emu2.name)! / got.get(fio2.name)!);
          push(ratios, key(d, block, op, 'tcp x2 vs fio x2'), got.get(tcp2.name)! / got.get(fio2.name)!);
        }
      }
    }
    printSummary({
      throughput,
      ratios,
      targetCpu,
      workerCpu,
      machineBusy,
      mainThreadBusy,
      kernelShare,
      depths,
      twoDrives,
      rounds,
      bytes,
    });
  } finally {
    await stopAll();
    if (!values.keep && !values.dir) await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
