import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@vtl/api/testing/free-port';
import {
  type RunResult,
  USER_HZ,
  command,
  fsyncAll,
  onPath,
  runWorker,
  spawnUntilLine,
  terminate,
} from './processes.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const INITIATOR = join(here, 'initiator.js');
const RAW_FILE = join(here, 'raw-file.js');
const EMULATOR_TARGET = join(here, 'emulator-target.js');

/** One timed run: `bytes` per stream in blocks of `block`, `depth` commands in flight per stream. */
export interface RunSpec {
  block: number;
  bytes: number;
  depth: number;
}

/**
 * One thing under test. `write` ends when the data is durable: the run's own sync point
 * (WRITE FILEMARKS, fsync) plus an fsync of its files from outside, which costs next to
 * nothing when the contender already synced and charges the contender that did not. A
 * contender with `streams` > 1 runs that many streams at once (one per drive, or per file),
 * and its result counts the bytes of all of them over the span from the first start to the
 * last end.
 */
export interface Contender {
  readonly name: string;
  readonly streams: number;
  write(run: RunSpec): Promise<RunResult>;
  read(run: RunSpec): Promise<RunResult>;
  stop(): Promise<void>;
}

/**
 * Node flags of the emulator process. A 64 MiB initial heap keeps V8 from running a full
 * mark-compact every few megabytes of streamed data (its small-heap heuristics otherwise see
 * the old generation as nearly full all the time); the nodeagent should start it the same way.
 */
export const EMULATOR_NODE_FLAGS = ['--initial-heap-size=64'];

export interface ContenderOptions {
  /** Working directory on the disk under test. */
  dir: string;
  /** Payload bytes of one run (sizes tgt's tape image). */
  bytes: number;
  /** Node flags for the emulator process (default EMULATOR_NODE_FLAGS). */
  emulatorNodeFlags?: string[];
  /** MaxBurstLength the initiator offers at login (default LINUX_MAX_BURST). */
  maxBurst?: number;
  /** What writes carry: fio's options for it and the same bytes in a file (default: fio's and a fill byte). */
  content?: ReplayContent;
}

/**
 * Write content both fio and the emulator's initiator write byte for byte: fio's buffer
 * options, and the file holding what they make fio write with blocks of `block` bytes (the
 * initiator sends it block after block). See fio-content.ts.
 */
export interface ReplayContent {
  fioArgs: string[];
  file(block: number): string;
}

/** What Linux's initiator (open-iscsi) offers as MaxBurstLength: the hosts the benchmark stands for. */
export const LINUX_MAX_BURST = 16776192;

async function withFsync(result: Promise<RunResult>, ...paths: string[]): Promise<RunResult> {
  const r = await result;
  let seconds = r.seconds;
  for (const path of paths) seconds += await fsyncAll(path);
  return { ...r, seconds };
}

/**
 * Streams run at once, one initiator process each: all their bytes over the span from the
 * first stream's start to the last one's end (the initiators print monotonic-clock stamps).
 */
export async function together(runs: Promise<RunResult>[]): Promise<RunResult> {
  const results = await Promise.all(runs);
  if (results.length === 1) return results[0]!;
  const start = results.reduce(
    (m, r) => (BigInt(r.startNs!) < m ? BigInt(r.startNs!) : m),
    BigInt(results[0]!.startNs!),
  );
  const end = results.reduce((m, r) => (BigInt(r.endNs!) > m ? BigInt(r.endNs!) : m), 0n);
  return {
    bytes: results.reduce((n, r) => n + r.bytes, 0),
    seconds: Number(end - start) / 1e9,
    cpuSeconds: results.reduce((n, r) => n + r.cpuSeconds, 0),
    systemSeconds: results.reduce((n, r) => n + (r.systemSeconds ?? NaN), 0),
    syncSeconds:
      Number(end - start) / 1e9 - Math.max(...results.map((r) => r.seconds - (r.syncSeconds ?? 0))),
    // Each stream saw the same machine over nearly the same span.
    machineBusyCores: results.reduce((n, r) => n + (r.machineBusyCores ?? NaN), 0) / results.length,
  };
}

/** CPU seconds a process, or one of its threads, has used so far: in all, and in the kernel. */
interface CpuTimes {
  total: number;
  system: number;
}

/**
 * CPU times of a process or one of its threads from /proc (Linux). A process's main thread
 * has the process's id: the emulator's event loop.
 */
export async function processCpuTimes(pid: number | undefined, thread?: number): Promise<CpuTimes> {
  if (pid === undefined) return { total: NaN, system: NaN };
  try {
    const stat = await readFile(
      thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`,
      'utf8',
    );
    // Fields after the command name, which may hold spaces: utime and stime are fields 14, 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [user, system] = [Number(fields[11]) / USER_HZ, Number(fields[12]) / USER_HZ];
    return { total: user + system, system };
  } catch {
    return { total: NaN, system: NaN };
  }
}

/** Adds the CPU seconds the target process and its main thread spent during the run. */
async function withTargetCpu(pid: number | undefined, run: () => Promise<RunResult>): Promise<RunResult> {
  const before = await processCpuTimes(pid);
  const mainBefore = await processCpuTimes(pid, pid);
  const r = await run();
  const after = await processCpuTimes(pid);
  return {
    ...r,
    targetCpuSeconds: after.total - before.total,
    targetSystemSeconds: after.system - before.system,
    targetMainThreadCpuSeconds: (await processCpuTimes(pid, pid)).total - mainBefore.total,
  };
}

function initiatorArgs(
  t: { portal: string; target: string; lun: number; maxBurst?: number; data?: ReplayContent },
  mode: string,
  run: RunSpec,
): string[] {
  const args = {
    portal: t.portal,
    target: t.target,
    lun: t.lun,
    'max-burst': t.maxBurst ?? LINUX_MAX_BURST,
    mode,
    ...run,
    ...(t.data ? { data: t.data.file(run.block) } : {}),
  };
  return Object.entries(args).flatMap(([k, v]) => [`--${k}`, String(v)]);
}

/** Plain file I/O on the same disk with the same block size (synchronous: depth 1 whatever asked). */
export async function rawFile(opts: ContenderOptions): Promise<Contender> {
  const file = join(opts.dir, 'raw.bin');
  const args = (mode: string, block: number, bytes: number) => [
    '--file',
    file,
    '--mode',
    mode,
    '--block',
    String(block),
    '--bytes',
    String(bytes),
  ];
  return {
    name: 'raw file',
    streams: 1,
    write: (r) => withFsync(runWorker(RAW_FILE, args('write', r.block, r.bytes)), file),
    read: (r) => runWorker(RAW_FILE, args('read', r.block, r.bytes)),
    stop: async () => undefined,
  };
}

/**
 * The emulator's iSCSI target in its own process, one library with two LTO-8 drives, each with
 * a cartridge loaded: `[one drive, both drives at once]`, two contenders sharing the process
 * (the one-drive runs use the first drive). Results carry the emulator process's CPU time.
 */
export async function emulator(opts: ContenderOptions): Promise<[Contender, Contender]> {
  const target = await emulatorDrives(opts, 2);
  // Only one of the two stops the process.
  return [target.on([0]), { ...target.on([0, 1]), stop: async () => undefined }];
}

/** The emulator's process with `count` drives, and contenders streaming to some of them at once. */
export interface EmulatorDrives {
  /** Streams to the drives of `drives` (indexes) at once; its stop() stops the process. */
  on(drives: number[]): Contender;
  /** The directory of the cartridge in each drive. */
  cartridgeDirs: string[];
  pid: number | undefined;
}

/** Starts the emulator's process with `count` drives (1 to 4), a cartridge loaded in each. */
export async function emulatorDrives(opts: ContenderOptions, count: number): Promise<EmulatorDrives> {
  const dir = join(opts.dir, 'emulator');
  await mkdir(dir, { recursive: true });
  const flags = opts.emulatorNodeFlags ?? EMULATOR_NODE_FLAGS;
  const { child, line } = await spawnUntilLine(process.execPath, [
    ...flags,
    EMULATOR_TARGET,
    ...['--dir', dir, '--drives', String(count)],
  ]);
  const t = JSON.parse(line) as { portal: string; target: string; luns: number[]; cartridgeDirs: string[] };
  const drive = (i: number) => ({
    portal: t.portal,
    target: t.target,
    lun: t.luns[i]!,
    maxBurst: opts.maxBurst,
    data: opts.content,
  });
  const on = (drives: number[]): Contender => {
    const each = (mode: string, r: RunSpec) =>
      together(drives.map((i) => runWorker(INITIATOR, initiatorArgs(drive(i), mode, r))));
    return {
      name: drives.length === 1 ? 'emulator' : `emulator x${drives.length}`,
      streams: drives.length,
      write: (r) =>
        withTargetCpu(child.pid, () =>
          withFsync(each('write', r), ...drives.map((i) => t.cartridgeDirs[i]!)),
        ),
      read: (r) => withTargetCpu(child.pid, () => each('read', r)),
      stop: () => terminate(child),
    };
  };
  return { on, cartridgeDirs: t.cartridgeDirs, pid: child.pid };
}

/** Whether tgt's daemon and tools are on the PATH (or in the sbin directories, for a non-root PATH). */
export async function tgtInstalled(): Promise<boolean> {
  const found = await Promise.all(['tgtd', 'tgtadm', 'tgtimg'].map((t) => onPath(t, ['/usr/sbin', '/sbin'])));
  return found.every(Boolean);
}

/** Linux SCSI target framework (Debian `tgt`): an ssc backing store under the same initiator. */
export async function tgt(opts: ContenderOptions): Promise<Contender> {
  const dir = join(opts.dir, 'tgt');
  await mkdir(dir, { recursive: true });
  const image = join(dir, 'tape.img');
  const port = await freePort();
  // A private management socket (/var/run/tgtd/socket.N), so a system tgtd is left alone.
  const control = String(20000 + (process.pid % 10000));
  const adm = (...args: string[]) => command('tgtadm', ['-C', control, '--lld', 'iscsi', ...args]);
  // tgtd logs every READ(6) on stderr; that chatter is discarded, not timed against it.
  const child = spawn('tgtd', ['-f', '-C', control, '--iscsi', `portal=127.0.0.1:${port}`], {
    stdio: 'ignore',
  });
  const iqn = 'iqn.2025-01.io.vtl.bench:tgt';
  try {
    await waitForTgtd(() => adm('--mode', 'target', '--op', 'show'), child);
    const sizeMb = String(Math.ceil((opts.bytes * 1.05) / 2 ** 20) + 64);
    await command('rm', ['-f', image]);
    await command('tgtimg', [
      '--op',
      'new',
      '--device-type',
      'tape',
      '--barcode',
      'BENCH001',
      '--size',
      sizeMb,
      '--type',
      'data',
      '--file',
      image,
      '--thin-provisioning',
    ]);
    await adm('--mode', 'target', '--op', 'new', '--tid', '1', '--targetname', iqn);
    await adm(
      ...['--mode', 'logicalunit', '--op', 'new', '--tid', '1', '--lun', '1'],
      ...['--bstype', 'ssc', '--device-type', 'tape', '--backing-store', image],
    );
    await adm('--mode', 'target', '--op', 'bind', '--tid', '1', '--initiator-address', 'ALL');
  } catch (err) {
    await terminate(child, 1000);
    throw err;
  }
  const target = { portal: `127.0.0.1:${port}`, target: iqn, lun: 1, maxBurst: opts.maxBurst };
  return {
    name: 'tgt',
    streams: 1,
    write: (r) =>
      withTargetCpu(child.pid, () =>
        withFsync(runWorker(INITIATOR, initiatorArgs(target, 'write', r)), image),
      ),
    read: (r) => withTargetCpu(child.pid, () => runWorker(INITIATOR, initiatorArgs(target, 'read', r))),
    // tgtd ignores SIGTERM and refuses to shut down while it has targets: delete, then shut down.
    stop: async () => {
      await adm('--mode', 'target', '--op', 'delete', '--force', '--tid', '1').catch(() => undefined);
      await command('tgtadm', ['-C', control, '--op', 'delete', '--mode', 'system']).catch(() => undefined);
      await terminate(child, 5000);
    },
  };
}

/** Polls the management socket until tgtd answers (it has no readiness signal). */
async function waitForTgtd(probe: () => Promise<unknown>, child: { exitCode: number | null }): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`tgtd exited with ${child.exitCode} (it needs root)`);
    try {
      await probe();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
