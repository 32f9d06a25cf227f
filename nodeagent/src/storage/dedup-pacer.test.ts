import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@vtl/reconcile';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as btrfs from './btrfs.js';
import { DedupRunner, hashFile, passProcesses } from './dedup-pass.js';
import { PassPacer, type PassPacerOptions } from './dedup-pacer.js';

const MiB = 1024 ** 2;
/**
 * Per cartridge: enough that the pass outlasts the pacer's first look by far. The pacer needs two
 * samples 250 ms apart to see a drive's counter move; duperemove took 0.5 s unpaced over two
 * cartridges of 160 MiB, which a CI run once saw end before it was stopped, and 1.5 s over two of
 * 512 MiB.
 */
const IMAGE = 512 * MiB;

function skipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (loop devices, mkfs.btrfs, mount)';
  for (const tool of ['mkfs.btrfs', 'losetup', 'duperemove', 'ionice', 'compsize'])
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed`;
    }
  return undefined;
}
const skip = skipReason();

/** The pass's process, if it runs (at most one per mountpoint). */
async function passProcess(mountpoint: string) {
  return (await passProcesses(mountpoint))[0];
}

/**
 * The dedup pass paced by host I/O (PassPacer), with Debian's duperemove over two cartridges of
 * the same bytes on btrfs over a loop device: a drive's counter that grows keeps the pass
 * stopped, a quiet one lets it finish, and a stopped pass is ended by a load or a shutdown.
 */
describe.skipIf(skip)(`dedup pass paced by host I/O${skip ? ` (skipped: ${skip})` : ''}`, () => {
  // Made only when the tests run: a skipped suite's afterAll does not run to remove it.
  const dir = skip ? '' : mkdtempSync(path.join(os.tmpdir(), 'vtl-pacer-'));
  const mountpoint = path.join(dir, 'storage');
  const pool = path.join(mountpoint, 'pools', 'p');
  let device = '';
  let runner: DedupRunner | undefined;
  let streaming: NodeJS.Timeout | undefined;
  const hostBytes = { n: 0 };
  const busy = new Set<string>();
  /** The runner's log lines, told on a miss. */
  const runnerLog: string[] = [];

  /** A drive streaming: its byte counter grows every 200 ms until stopStreaming(). */
  const startStreaming = () => (streaming = setInterval(() => (hostBytes.n += 256 * 1024), 200));
  const stopStreaming = () => clearInterval(streaming);

  /**
   * Waits until the pass is seen stopped by the pacer; on a miss, says what the runner and the
   * pass's processes were doing.
   */
  async function passStopped(r: DedupRunner) {
    try {
      await waitFor(async () => (await passProcess(mountpoint))?.state === 'T', { timeoutMs: 20_000 });
    } catch (err) {
      const processes = JSON.stringify(await passProcesses(mountpoint));
      const log = runnerLog.slice(-12).join('\n');
      throw new Error(`${String(err)}; runner ${JSON.stringify(r.status)}; processes ${processes}\n${log}`);
    }
  }

  /** A runner with a pass requested now, from an empty hash file and a cold page cache. */
  async function startPass(pacing: { maxPauseMs?: number; overrideMs?: number } = {}): Promise<DedupRunner> {
    runnerLog.length = 0;
    await fs.rm(path.dirname(hashFile(mountpoint)), { recursive: true, force: true });
    await btrfs.unmount(mountpoint);
    await btrfs.mount(device, mountpoint);
    const r = new DedupRunner({
      mountpoint,
      logger: pino({ level: 'debug' }, { write: (line: string) => void runnerLog.push(line.trim()) }),
      busyLabels: async () => new Set(busy),
      poolPaths: async () => [pool],
      onChange: () => undefined,
      hostBytes: () => hostBytes.n,
      ...pacing,
    });
    runner = r;
    r.start();
    const now = new Date().toISOString();
    r.update(
      {
        node: 'n1',
        devices: [device],
        force: [],
        dedup: { interval_minutes: 60, paused: false },
        created_at: now,
        dedup_requested_at: now,
      },
      true,
    );
    return r;
  }

  beforeAll(async () => {
    const file = path.join(dir, 'disk.img');
    await fs.writeFile(file, '');
    await fs.truncate(file, 3 * 1024 * MiB);
    device = execFileSync('losetup', ['-f', '--show', file], { encoding: 'utf8' }).trim();
    await btrfs.mkfs([device], false);
    await fs.mkdir(mountpoint);
    await btrfs.mount(device, mountpoint);
    const images = ['AAA001L8', 'BBB001L8'].map((label) => path.join(pool, 'LIB1', label, 'data.img'));
    for (const image of images) await fs.mkdir(path.dirname(image), { recursive: true });
    const handles = await Promise.all(images.map((i) => fs.open(i, 'w')));
    for (let at = 0; at < IMAGE; at += 8 * MiB) {
      const chunk = randomBytes(8 * MiB);
      for (const h of handles) await h.write(chunk);
    }
    for (const h of handles) await h.close();
  });

  afterEach(async () => {
    stopStreaming();
    busy.clear();
    await runner?.stop();
    runner = undefined;
  });

  afterAll(() => {
    for (const [cmd, args] of [
      ['umount', ['-l', mountpoint]],
      ['losetup', ['-d', device]],
    ] as const)
      try {
        if (device) execFileSync(cmd, args, { stdio: 'ignore' });
      } catch {
        // not set up that far
      }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stays stopped while a drive moves bytes and finishes once it is quiet', async () => {
    startStreaming();
    const r = await startPass();
    await passStopped(r);
    // Still stopped a while later: the stream goes on.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect((await passProcess(mountpoint))?.state).toBe('T');
    expect(r.status.state).toBe('running');
    stopStreaming();
    await waitFor(async () => r.status.last_result !== null && r.status.state === 'idle', {
      timeoutMs: 180_000,
      intervalMs: 500,
    });
    expect(r.status.last_result, r.status.last_detail).toBe('completed');
    expect(r.status.files_done).toBe(2);
    expect(r.status.host_pause_seconds).toBeGreaterThanOrEqual(4);
    expect(await passProcess(mountpoint)).toBeUndefined();
    // The pass did its work once it went on: the two cartridges share their extents.
    const shared = await btrfs.extentBytes([pool]);
    expect(shared.referenced).toBeGreaterThan(1.5 * shared.uncompressed);
  }, 240_000);

  it('runs on after its longest pause and finishes while a drive streams on', async () => {
    startStreaming();
    const r = await startPass({ maxPauseMs: 2_000, overrideMs: 3_000 });
    await passStopped(r);
    await waitFor(async () => r.status.last_result !== null && r.status.state === 'idle', {
      timeoutMs: 180_000,
      intervalMs: 500,
    });
    expect(r.status.last_result, r.status.last_detail).toBe('completed');
    expect(r.status.host_pause_overrides).toBeGreaterThanOrEqual(1);
    expect(r.status.host_pause_seconds).toBeGreaterThanOrEqual(2);
    const shared = await btrfs.extentBytes([pool]);
    expect(shared.referenced).toBeGreaterThan(1.5 * shared.uncompressed);
  }, 240_000);

  it('ends a stopped pass when one of its cartridges is loaded', async () => {
    startStreaming();
    const r = await startPass();
    await passStopped(r);
    busy.add('BBB001L8');
    r.poke();
    await waitFor(async () => r.status.state === 'idle', { timeoutMs: 20_000 });
    expect(r.status.last_result).toBe('interrupted');
    expect(r.status.last_detail).toMatch(/BBB001L8 became busy/);
    expect(await passProcess(mountpoint)).toBeUndefined();
  }, 60_000);

  it('ends a stopped pass when the nodeagent stops', async () => {
    startStreaming();
    const r = await startPass();
    await passStopped(r);
    await r.stop();
    await waitFor(async () => (await passProcess(mountpoint)) === undefined, { timeoutMs: 10_000 });
  }, 60_000);
});

/** The process state letter of `pid` (T: stopped). */
async function stateOf(pid: number): Promise<string> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

/** A stand-in pass (`sleep`) paced while a drive's counter grows every 20 ms; end() stops all. */
function pacedUnderStream(opts: Pick<PassPacerOptions, 'quietMs' | 'maxPauseMs' | 'overrideMs'>) {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  let bytes = 0;
  const streaming = setInterval(() => (bytes += 1), 20);
  const pacer = new PassPacer({ pid: child.pid!, hostBytes: () => bytes, sampleMs: 50, ...opts }).start();
  const end = () => {
    clearInterval(streaming);
    pacer.stop();
    child.kill();
  };
  return { child, pacer, end };
}

describe('PassPacer bound on a pause', () => {
  it('lets a pass paused its longest run on for a while, then paces it again', async () => {
    const { child, pacer, end } = pacedUnderStream({ quietMs: 300, maxPauseMs: 1_000, overrideMs: 1_500 });
    try {
      await waitFor(async () => (await stateOf(child.pid!)) === 'T', { timeoutMs: 5_000, intervalMs: 20 });
      const pausedAt = Date.now();
      await waitFor(async () => pacer.overrides === 1, { timeoutMs: 5_000, intervalMs: 20 });
      expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(900);
      expect(await stateOf(child.pid!)).not.toBe('T');
      // The host still streams: runs on through the override, then is stopped again.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await stateOf(child.pid!)).not.toBe('T');
      await waitFor(async () => (await stateOf(child.pid!)) === 'T', { timeoutMs: 3_000, intervalMs: 20 });
      expect(pacer.paused).toBe(true);
    } finally {
      end();
    }
  });

  it('keeps a pass paused as long as hosts stream when the bound is 0', async () => {
    const { child, pacer, end } = pacedUnderStream({ maxPauseMs: 0 });
    try {
      await waitFor(async () => (await stateOf(child.pid!)) === 'T', { timeoutMs: 5_000, intervalMs: 20 });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await stateOf(child.pid!)).toBe('T');
      expect(pacer.overrides).toBe(0);
    } finally {
      end();
    }
  });
});
