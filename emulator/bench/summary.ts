import { availableParallelism } from 'node:os';
import { formatSize, median } from './stats.js';

/** Block sizes and operations of every group. */
export const BLOCKS = [256 * 1024, 1024 * 1024];
export const OPS = ['write', 'read'] as const;
export type Op = (typeof OPS)[number];
/** Two drives stream at the depth Linux `st` keeps per drive. */
export const TWO_DRIVE_DEPTH = 1;

/**
 * Issue 19's targets, on medians of per-round ratios: the emulator at 0.9 × fio with O_DIRECT
 * (the disk's limit) for every block, op and depth, never behind tgt, and two drives at 1.6 ×
 * one drive where fio's two streams show the disk itself reaches that rate (else 0.9 × fio with
 * two streams).
 */
export const TARGETS = { fio: 0.9, tgt: 1.0, twoDrives: 1.6, twoVsFio: 0.9 };

/** Figures by key (see key()), one entry per round. */
export type Figures = Map<string, number[]>;

export const key = (depth: number, block: number, op: Op, name: string) => `${depth}/${block}/${op}/${name}`;
export const push = (m: Figures, k: string, v: number) => m.set(k, [...(m.get(k) ?? []), v]);
const fmt = (n: number, width: number, digits = 1) =>
  (Number.isFinite(n) ? n.toFixed(digits) : '-').padStart(width);

export interface Summary {
  throughput: Figures;
  ratios: Figures;
  /** CPU milliseconds of the target process per GiB moved. */
  targetCpu: Figures;
  /** CPU milliseconds per GiB of the process that moved the bytes (the initiator, fio, the raw file writer). */
  workerCpu: Figures;
  /** Cores the whole machine kept busy during initiator runs (the emulator's, tgt's). */
  machineBusy: Figures;
  /** The share of the stream the target's main thread (the emulator's event loop) was on a core. */
  mainThreadBusy: Figures;
  /** The share of the target's and its initiator's CPU spent in the kernel (loopback TCP, the disk). */
  kernelShare: Figures;
  depths: number[];
  twoDrives: boolean;
  rounds: number;
  bytes: number;
}

/**
 * The cores the emulator and its initiators together would keep busy at a target's rate, at
 * the CPU per GiB they used in this run. Both run on this machine while fio needs next to no
 * CPU: above the machine's cores, the target is out of its reach whatever the disk.
 */
function coresAt(targetMiBps: number, emulatorMsPerGiB: number, initiatorMsPerGiB: number): number {
  return (((emulatorMsPerGiB + initiatorMsPerGiB) / 1000) * targetMiBps) / 1024;
}

/** What a missed target adds about the CPU (see aboutCores). */
interface CpuAtTarget {
  /** Cores the emulator and its initiators would keep busy at the target's rate. */
  needed: number;
  /** Cores the whole machine kept busy at the emulator's own pace. */
  busy: number;
  /** The event loop's share of the stream on a core. */
  loop: number;
  /** Target rate / achieved rate. */
  scale: number;
  /** The kernel's share of the emulator's and its initiators' CPU. */
  kernel: number;
}

/**
 * What a missed target adds: whether the machine's cores could carry it, how busy they already
 * were at the emulator's own pace (everything on the machine, the kernel's share of loopback TCP
 * included), how much of one core the emulator's event loop, a single thread, would need at the
 * target's rate (`loop` scaled by target / achieved: its CPU per GiB stays the same), and how
 * much of the CPU both processes used was the kernel's (socket copies and TCP on loopback,
 * which a host's initiator on its own machine would not put on these cores).
 */
const aboutCores = (c: CpuAtTarget, cores: number) =>
  ` (would keep ${c.needed.toFixed(1)} of ${cores} cores busy; ${fmt(c.busy, 0, 2).trim()} were at its pace; ` +
  `its event loop was on a core ${fmt(c.loop * 100, 0, 0).trim()} % of the time, ` +
  `${fmt(c.loop * c.scale * 100, 0, 0).trim()} % at the target; ` +
  `${fmt(c.kernel * 100, 0, 0).trim()} % of the emulator's and initiator's CPU was the kernel's)`;

/**
 * What bare TCP over loopback did against fio in the same rounds, beside a missed target: below
 * the target, no iSCSI target on this machine could have met it; above, how much of the
 * machine's cores TCP alone would take at the target's rate, before the target's own work.
 */
const aboutTcp = (tcpVsFio: number, coresAtTarget: number, cores: number) =>
  `; bare loopback TCP moved ${fmt(tcpVsFio, 0, 2).trim()} x fio` +
  (tcpVsFio < TARGETS.fio
    ? ', itself below the target'
    : ` and would keep ${fmt(coresAtTarget, 0, 1).trim()} of ${cores} cores busy at the target on its own`);

/** Prints the medians, each target met or missed, and the overall verdict. */
export function printSummary(s: Summary): void {
  const m = (f: Figures, k: string) => median(f.get(k) ?? []);
  const cores = availableParallelism();
  console.log(
    `\nMedians over ${s.rounds} rounds of ${formatSize(s.bytes)} per stream ` +
      '(MiB/s; ratios are medians of per-round ratios; CPU: ms per GiB of the target process and, ' +
      `for the emulator, of its initiator; cores@${TARGETS.fio}: what both would keep busy at ` +
      `${TARGETS.fio} x fio, of the ${cores} here; busy: cores the whole machine kept busy while the emulator streamed; ` +
      "loop: the share of that time its event loop was on a core; kernel: the share of the emulator's and " +
      "its initiator's CPU spent in the kernel; tcp: bare loopback TCP in C, no iSCSI and no disk, the most " +
      'any target here can move)',
  );
  console.log(
    'qd  block    op     raw file       fio  emulator       tgt       tcp  emu/fio  emu/tgt  emu/raw  tcp/fio  ' +
      `emu CPU  ini CPU  tgt CPU  cores@${TARGETS.fio}  busy  loop  kernel`,
  );
  const missed: string[] = [];
  for (const depth of s.depths) {
    for (const block of BLOCKS) {
      for (const op of OPS) {
        const k = (name: string) => key(depth, block, op, name);
        const vsFio = m(s.ratios, k('vs fio'));
        const vsTgt = m(s.ratios, k('vs tgt'));
        const tcpVsFio = m(s.ratios, k('tcp vs fio'));
        const what = `qd${depth} ${formatSize(block)} ${op}`;
        const emuCpu = m(s.targetCpu, k('emulator'));
        const iniCpu = m(s.workerCpu, k('emulator'));
        const needed = coresAt(TARGETS.fio * m(s.throughput, k('fio')), emuCpu, iniCpu);
        const busy = m(s.machineBusy, k('emulator'));
        const loop = m(s.mainThreadBusy, k('emulator'));
        const kernel = m(s.kernelShare, k('emulator'));
        if (!(vsFio >= TARGETS.fio)) {
          const cpu = { needed, busy, loop, scale: TARGETS.fio / vsFio, kernel };
          const tcpCores = coresAt(TARGETS.fio * m(s.throughput, k('fio')), m(s.workerCpu, k('tcp')), 0);
          const tcp = aboutTcp(tcpVsFio, tcpCores, cores);
          missed.push(`${what}: ${vsFio.toFixed(2)} x fio${tcp}${aboutCores(cpu, cores)}`);
        }
        if (!(vsTgt >= TARGETS.tgt)) missed.push(`${what}: ${vsTgt.toFixed(2)} x tgt`);
        console.log(
          `${String(depth).padEnd(3)} ${formatSize(block).padEnd(8)} ${op.padEnd(5)} ` +
            `${fmt(m(s.throughput, k('raw file')), 9)} ${fmt(m(s.throughput, k('fio')), 9)} ` +
            `${fmt(m(s.throughput, k('emulator')), 9)} ${fmt(m(s.throughput, k('tgt')), 9)} ` +
            `${fmt(m(s.throughput, k('tcp')), 9)} ` +
            `${fmt(vsFio, 8, 2)} ${fmt(vsTgt, 8, 2)} ${fmt(m(s.ratios, k('vs raw')), 8, 2)} ${fmt(tcpVsFio, 8, 2)} ` +
            `${fmt(emuCpu, 8, 0)} ${fmt(iniCpu, 8, 0)} ${fmt(m(s.targetCpu, k('tgt')), 8, 0)} ` +
            `${fmt(needed, 8, 2)} ${fmt(busy, 5, 2)} ${fmt(loop, 5, 2)} ${fmt(kernel, 6, 2)}  ` +
            (vsFio >= TARGETS.fio && vsTgt >= TARGETS.tgt ? 'ok' : 'below target'),
        );
      }
    }
  }
  if (s.twoDrives && s.depths.includes(TWO_DRIVE_DEPTH)) {
    const d = TWO_DRIVE_DEPTH;
    console.log(
      `\nTwo streams at once, qd${d} each (MiB/s of both together; cores: what the emulator and ` +
        'both initiators would keep busy at the target; busy: cores the machine kept busy meanwhile; ' +
        "loop: the emulator's event loop's share of it; kernel: the kernel's share of their CPU; " +
        'tcp x2: two bare loopback TCP streams in C)',
    );
    console.log(
      'block    op     emulator x2    fio x2    tcp x2  x2/x1  fio x2/x1  x2/fio x2  tcp x2/fio x2  cores   busy  loop  kernel  target',
    );
    for (const block of BLOCKS) {
      for (const op of OPS) {
        const k = (name: string) => key(d, block, op, name);
        const scale = m(s.ratios, k('x2 vs x1'));
        const fioScale = m(s.ratios, k('fio x2 vs x1'));
        const vsFio2 = m(s.ratios, k('x2 vs fio x2'));
        const tcpVsFio2 = m(s.ratios, k('tcp x2 vs fio x2'));
        // The disk allows two drives 1.6 × one drive's rate when fio's two streams on it reach
        // that rate; else the disk is the limit, and the bar is fio's two streams. (fio's own
        // x2/x1 is not the test: where one emulator drive outruns one fio stream, as its
        // read-ahead does, the disk may have room for fio's second stream but not for 1.6 × it.)
        const diskAllows = m(s.throughput, k('fio x2')) >= TARGETS.twoDrives * m(s.throughput, k('emulator'));
        const met = diskAllows ? scale >= TARGETS.twoDrives : vsFio2 >= TARGETS.twoVsFio;
        const goal = diskAllows ? `x2/x1 >= ${TARGETS.twoDrives}` : `x2/fio x2 >= ${TARGETS.twoVsFio}`;
        const goalMiBps = diskAllows
          ? TARGETS.twoDrives * m(s.throughput, k('emulator'))
          : TARGETS.twoVsFio * m(s.throughput, k('fio x2'));
        const needed = coresAt(goalMiBps, m(s.targetCpu, k('emulator x2')), m(s.workerCpu, k('emulator x2')));
        const busy = m(s.machineBusy, k('emulator x2'));
        const loop = m(s.mainThreadBusy, k('emulator x2'));
        const kernel = m(s.kernelShare, k('emulator x2'));
        if (!met) {
          const cpu = { needed, busy, loop, scale: goalMiBps / m(s.throughput, k('emulator x2')), kernel };
          const tcpCores = coresAt(goalMiBps, m(s.workerCpu, k('tcp x2')), 0);
          const tcp = diskAllows ? '' : aboutTcp(tcpVsFio2, tcpCores, cores);
          missed.push(`two drives ${formatSize(block)} ${op}: ${goal} missed${tcp}${aboutCores(cpu, cores)}`);
        }
        console.log(
          `${formatSize(block).padEnd(8)} ${op.padEnd(5)} ${fmt(m(s.throughput, k('emulator x2')), 12)} ` +
            `${fmt(m(s.throughput, k('fio x2')), 9)} ${fmt(m(s.throughput, k('tcp x2')), 9)} ` +
            `${fmt(scale, 6, 2)} ${fmt(fioScale, 10, 2)} ` +
            `${fmt(vsFio2, 10, 2)} ${fmt(tcpVsFio2, 14, 2)} ${fmt(needed, 6, 2)} ${fmt(busy, 6, 2)} ${fmt(loop, 5, 2)} ${fmt(kernel, 7, 2)}  ` +
            `${goal}: ${met ? 'ok' : 'below target'}`,
        );
      }
    }
  }
  console.log(
    `\nTargets: emulator >= ${TARGETS.fio} x fio (O_DIRECT) and >= ${TARGETS.tgt} x tgt at every depth; ` +
      `two drives >= ${TARGETS.twoDrives} x one where fio x2 reaches that rate, else >= ${TARGETS.twoVsFio} x fio x2: ` +
      (missed.length === 0 ? 'met' : 'NOT met'),
  );
  for (const line of missed) console.log(`  missed: ${line}`);
}
