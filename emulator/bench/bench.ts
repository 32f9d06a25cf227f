import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Contender, EMULATOR_NODE_FLAGS, emulator, rawFile, tgt, tgtInstalled } from './contenders.js';
import { dropCaches } from './processes.js';
import { formatSize, median, mibPerSecond, parseSize } from './stats.js';

/**
 * `npm run bench:emulator -- [--size 2G] [--rounds 9] [--depth 4] [--dir PATH] [--keep]
 *   [--emulator-node-flags '--initial-heap-size=64']`
 *
 * Sequential WRITE(6)/READ(6) of `--size` bytes through the emulator's iSCSI target with
 * 256 KiB and 1 MiB blocks, beside raw file I/O on the same disk and tgt's tape emulation
 * under the same initiator. The disk's speed drifts a lot between runs, so contenders run
 * back to back in alternating order and the summary gives medians of the ratios within each
 * round, not ratios of medians. Nine rounds by default: single rounds of one figure spread from
 * 0.6 to 1.3 times their median here, and the median of five moved by a tenth between runs.
 */
const BLOCKS = [256 * 1024, 1024 * 1024];
const OPS = ['write', 'read'] as const;
const TARGETS = { raw: 0.8, tgt: 1.5 };
const WARM_UP_BYTES = 64 * 1024 * 1024;

type Op = (typeof OPS)[number];
type Figures = Map<string, number[]>;

const key = (block: number, op: Op, name: string) => `${block}/${op}/${name}`;
const push = (m: Figures, k: string, v: number) => m.set(k, [...(m.get(k) ?? []), v]);
const fmt = (n: number, width: number, digits = 1) => n.toFixed(digits).padStart(width);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: '2G' },
      rounds: { type: 'string', default: '9' },
      depth: { type: 'string', default: '4' },
      dir: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'emulator-node-flags': { type: 'string', default: EMULATOR_NODE_FLAGS.join(' ') },
    },
  });
  const emulatorNodeFlags = values['emulator-node-flags'].split(/\s+/).filter(Boolean);
  const bytes = parseSize(values.size);
  const rounds = Number(values.rounds);
  const depth = Number(values.depth);
  if (!(rounds >= 1) || !(depth >= 1)) throw new Error('--rounds and --depth are positive integers');
  if (!(await tgtInstalled())) {
    process.stderr.write(
      'tgt (tgtd, tgtadm, tgtimg) is not installed; it is the comparison target.\n' +
        'Install it with: sudo apt-get install -y tgt   (Debian/Ubuntu), then run this as root.\n',
    );
    process.exit(2);
  }
  const dir = values.dir ?? (await mkdtemp(join(tmpdir(), 'vtl-bench-')));
  const cold = await dropCaches();
  console.log(
    `Sequential ${formatSize(bytes)} per run, ${rounds} rounds, ${depth} commands in flight, in ${dir}; ` +
      (cold
        ? 'sync + drop_caches before every run'
        : 'NOT root: page cache not dropped, reads may come from memory'),
  );

  console.log(`Emulator process: node ${emulatorNodeFlags.join(' ')} emulator-target.js`);
  const opts = { dir, depth, bytes, emulatorNodeFlags };
  const contenders: Contender[] = [];
  const stopAll = async () => {
    for (const c of contenders.splice(0)) await c.stop().catch(() => undefined);
  };
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));
  const throughput: Figures = new Map();
  const ratios: Figures = new Map();
  try {
    contenders.push(await rawFile(opts), await emulator(opts), await tgt(opts));
    const [raw, emu, tgtd] = contenders as [Contender, Contender, Contender];
    // Untimed: JIT warm-up of the emulator and first-touch allocation of every file.
    const warmUp = Math.min(bytes, WARM_UP_BYTES);
    for (const c of contenders) {
      for (const block of BLOCKS) {
        await c.write(block, warmUp);
        await c.read(block, warmUp);
      }
    }
    for (let round = 1; round <= rounds; round++) {
      // A B C, then C B A: neither baseline always runs right after the other's writeback.
      const order = round % 2 === 1 ? [raw, emu, tgtd] : [tgtd, emu, raw];
      for (const block of BLOCKS) {
        for (const op of OPS) {
          const got = new Map<string, number>();
          for (const c of order) {
            await dropCaches();
            const r = await c[op](block, bytes);
            const rate = mibPerSecond(r.bytes, r.seconds);
            got.set(c.name, rate);
            push(throughput, key(block, op, c.name), rate);
            console.log(
              `round ${round}  ${formatSize(block).padStart(7)}  ${op.padEnd(5)}  ${c.name.padEnd(8)} ` +
                `${fmt(rate, 7)} MiB/s  (${fmt(r.seconds, 6, 2)} s, worker CPU ${fmt(r.cpuSeconds, 5, 2)} s)`,
            );
          }
          push(ratios, key(block, op, 'raw'), got.get(emu.name)! / got.get(raw.name)!);
          push(ratios, key(block, op, 'tgt'), got.get(emu.name)! / got.get(tgtd.name)!);
        }
      }
    }
    printSummary(throughput, ratios, [raw, emu, tgtd], rounds, bytes);
  } finally {
    await stopAll();
    if (!values.keep && !values.dir) await rm(dir, { recursive: true, force: true });
  }
}

function printSummary(
  throughput: Figures,
  ratios: Figures,
  [raw, emu, tgtd]: Contender[],
  rounds: number,
  bytes: number,
): void {
  console.log(
    `\nMedians over ${rounds} rounds of ${formatSize(bytes)} (MiB/s; ratios are medians of per-round ratios)`,
  );
  console.log('block    op     raw file  emulator       tgt   emu/raw  emu/tgt');
  let allMet = true;
  for (const block of BLOCKS) {
    for (const op of OPS) {
      const m = (name: string) => median(throughput.get(key(block, op, name)) ?? []);
      const vsRaw = median(ratios.get(key(block, op, 'raw')) ?? []);
      const vsTgt = median(ratios.get(key(block, op, 'tgt')) ?? []);
      const met = vsRaw >= TARGETS.raw && vsTgt >= TARGETS.tgt;
      allMet &&= met;
      console.log(
        `${formatSize(block).padEnd(8)} ${op.padEnd(5)} ${fmt(m(raw!.name), 9)} ${fmt(m(emu!.name), 9)} ` +
          `${fmt(m(tgtd!.name), 9)} ${fmt(vsRaw, 8, 2)} ${fmt(vsTgt, 8, 2)}  ${met ? 'ok' : 'below target'}`,
      );
    }
  }
  console.log(
    `Targets: emulator >= ${TARGETS.raw} x raw file and >= ${TARGETS.tgt} x tgt: ${allMet ? 'met' : 'NOT met'}`,
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
