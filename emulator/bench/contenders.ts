import { spawn } from 'node:child_process';
import { access, mkdir } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@vtl/store';
import { type RunResult, command, fsyncAll, runWorker, spawnUntilLine, terminate } from './processes.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const INITIATOR = join(here, 'initiator.js');
const RAW_FILE = join(here, 'raw-file.js');
const EMULATOR_TARGET = join(here, 'emulator-target.js');

/**
 * One thing under test. `write` ends when the data is durable: the run's own sync point
 * (WRITE FILEMARKS, fsync) plus an fsync of its files from outside, which costs next to
 * nothing when the contender already synced and charges the contender that did not.
 */
export interface Contender {
  readonly name: string;
  write(block: number, bytes: number): Promise<RunResult>;
  read(block: number, bytes: number): Promise<RunResult>;
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
  /** Commands the initiator keeps in flight. */
  depth: number;
  /** Payload bytes of one run (sizes tgt's tape image). */
  bytes: number;
  /** Node flags for the emulator process (default EMULATOR_NODE_FLAGS). */
  emulatorNodeFlags?: string[];
}

async function withFsync(result: Promise<RunResult>, path: string): Promise<RunResult> {
  const r = await result;
  return { ...r, seconds: r.seconds + (await fsyncAll(path)) };
}

function initiatorArgs(
  t: { portal: string; target: string; lun: number },
  mode: string,
  block: number,
  bytes: number,
  depth: number,
): string[] {
  const args = { portal: t.portal, target: t.target, lun: t.lun, mode, block, bytes, depth };
  return Object.entries(args).flatMap(([k, v]) => [`--${k}`, String(v)]);
}

/** Plain file I/O on the same disk with the same block size. */
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
    write: (block, bytes) => withFsync(runWorker(RAW_FILE, args('write', block, bytes)), file),
    read: (block, bytes) => runWorker(RAW_FILE, args('read', block, bytes)),
    stop: async () => undefined,
  };
}

/** The emulator's iSCSI target in its own process, one LTO-8 drive with a cartridge loaded. */
export async function emulator(opts: ContenderOptions): Promise<Contender> {
  const dir = join(opts.dir, 'emulator');
  await mkdir(dir, { recursive: true });
  const flags = opts.emulatorNodeFlags ?? EMULATOR_NODE_FLAGS;
  const { child, line } = await spawnUntilLine(process.execPath, [...flags, EMULATOR_TARGET, '--dir', dir]);
  const target = JSON.parse(line) as { portal: string; target: string; lun: number; cartridgeDir: string };
  return {
    name: 'emulator',
    write: (block, bytes) =>
      withFsync(
        runWorker(INITIATOR, initiatorArgs(target, 'write', block, bytes, opts.depth)),
        target.cartridgeDir,
      ),
    read: (block, bytes) => runWorker(INITIATOR, initiatorArgs(target, 'read', block, bytes, opts.depth)),
    stop: () => terminate(child),
  };
}

/** Whether tgt's daemon and tools are on the PATH. */
export async function tgtInstalled(): Promise<boolean> {
  const dirs = (process.env.PATH ?? '').split(delimiter).concat(['/usr/sbin', '/sbin']);
  for (const tool of ['tgtd', 'tgtadm', 'tgtimg']) {
    const found = await Promise.any(dirs.map((d) => access(join(d, tool)))).then(
      () => true,
      () => false,
    );
    if (!found) return false;
  }
  return true;
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
  const target = { portal: `127.0.0.1:${port}`, target: iqn, lun: 1 };
  return {
    name: 'tgt',
    write: (block, bytes) =>
      withFsync(runWorker(INITIATOR, initiatorArgs(target, 'write', block, bytes, opts.depth)), image),
    read: (block, bytes) => runWorker(INITIATOR, initiatorArgs(target, 'read', block, bytes, opts.depth)),
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
