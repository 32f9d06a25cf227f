import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { isoNow, type DedupStatus, type StorageSpec } from '@vtl/api';
import type { Logger } from 'pino';
import { PassPacer } from './dedup-pacer.js';

/** The hash file lives on the storage itself: it survives a restart and goes with a teardown. */
export const hashFile = (mountpoint: string) => path.join(mountpoint, '.vtl-dedup', 'hashes.db');

/** Removes the hash file and SQLite's companions of it. */
async function removeHashFile(mountpoint: string) {
  for (const suffix of ['', '-journal', '-wal', '-shm'])
    await fs.rm(hashFile(mountpoint) + suffix, { force: true });
}

/** How often the runner looks at the schedule and, during a pass, at which cartridges are busy. */
const TICK_MS = 2_000;

/**
 * duperemove's arguments: 128 KiB blocks (btrfs's largest compressed extent) matched across
 * extents whose boundaries differ (`partial`), one hashing and one I/O thread, the persistent
 * hash file (a file unchanged since the last pass is not read again). Measured on two 256 MiB
 * images of one backup stream written in different runs (docs/storage.md): 128 KiB blocks
 * shared them at 2.0x in 6 s; 64 KiB reached the same in 50 s, and 4 KiB blocks took minutes,
 * matching every repeat of a pattern inside one image.
 */
export function duperemoveArgs(mountpoint: string, files: string[]): string[] {
  return [
    '-n',
    '19',
    'ionice',
    '-c',
    '2',
    '-n',
    '7',
    'duperemove',
    '-d',
    '-b',
    '131072',
    '--dedupe-options=partial',
    `--hashfile=${hashFile(mountpoint)}`,
    '--io-threads=1',
    '--cpu-threads=1',
    ...files,
  ];
}

/** Image files of every cartridge under the pools, by label: `<pool>/<library serial>/<LABEL>/*`. */
export async function imageFilesByLabel(poolPaths: string[]): Promise<Map<string, string[]>> {
  const byLabel = new Map<string, string[]>();
  const dirs = async (p: string) =>
    (await fs.readdir(p, { withFileTypes: true }).catch(() => [])).filter(
      (e) => e.isDirectory() && !e.name.startsWith('.'),
    );
  for (const pool of poolPaths)
    for (const lib of await dirs(pool))
      for (const cart of await dirs(path.join(pool, lib.name))) {
        const dir = path.join(pool, lib.name, cart.name);
        const files = (await fs.readdir(dir, { withFileTypes: true }).catch(() => []))
          .filter((f) => f.isFile())
          .map((f) => path.join(dir, f.name));
        if (files.length > 0) byLabel.set(cart.name, [...(byLabel.get(cart.name) ?? []), ...files]);
      }
  return byLabel;
}

/**
 * The processes of passes over `mountpoint` (found by their hash file argument) with their state
 * letters (T: stopped). The pass is spawned as `nice ionice duperemove`, one pid that execs
 * twice; the pacer may stop it before the last exec, so it is looked for under all three names.
 */
export async function passProcesses(mountpoint: string): Promise<{ pid: number; state: string }[]> {
  const marker = `--hashfile=${hashFile(mountpoint)}`;
  const found = [];
  for (const pid of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const argv = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!['duperemove', 'nice', 'ionice'].includes(path.basename(argv[0] ?? '')) || !argv.includes(marker))
      continue;
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state && state !== 'Z') found.push({ pid: Number(pid), state });
  }
  return found;
}

/** A duperemove left running by a nodeagent that died: stopped before a new pass starts. */
async function stopOrphans(mountpoint: string, logger: Logger) {
  for (const { pid } of await passProcesses(mountpoint)) {
    logger.warn({ pid }, 'stopping a dedup pass left by an earlier nodeagent');
    try {
      process.kill(pid, 'SIGTERM');
      // It may have been left paused (PassPacer): a stopped process holds SIGTERM pending.
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone meanwhile
    }
  }
}

export interface DedupRunnerOptions {
  mountpoint: string;
  logger: Logger;
  /** Labels in a drive or under an active job: never part of a pass. */
  busyLabels: () => Promise<Set<string>>;
  /** The paths of this node's pools on the storage. */
  poolPaths: () => Promise<string[]>;
  /**
   * Bytes this node's drives have moved for hosts so far: the pass pauses while it grows
   * (PassPacer). Without it the pass is not paced.
   */
  hostBytes?: () => number | Promise<number>;
  /** PassPacer's bound on one pause (default PACER_MAX_PAUSE_MS; 0: none). */
  maxPauseMs?: number;
  /** How long a pass runs on once a pause reached that bound (default PACER_OVERRIDE_MS). */
  overrideMs?: number;
  /** The figures changed (progress, a pass began or ended). */
  onChange: () => void;
  /** The status the node last published: a restarted runner carries its last run on. */
  previous?: DedupStatus;
}

/**
 * The global dedup pass (docs/storage.md): Debian's duperemove over every idle cartridge of the
 * node's pools, which hashes 128 KiB blocks into a persistent SQLite hash file and hands matches
 * to the kernel's FIDEDUPERANGE (the kernel compares the bytes before sharing them, so a hash
 * collision cannot corrupt data; a killed pass leaves each range either shared or as it was).
 * Runs on the schedule of the storage spec, at the lowest CPU and I/O priority; a cartridge
 * loaded, a job started on one, a pause or a stop ends the pass at once, and the next pass
 * reads only what changed since (the hash file).
 */
export class DedupRunner {
  status: DedupStatus;
  private spec: StorageSpec | undefined;
  private mounted = false;
  private child: ChildProcess | undefined;
  private pacer: PassPacer | undefined;
  /** Pause time of the pass's earlier duperemove runs (a retry after an unreadable hash file). */
  private earlierPausedMs = 0;
  private earlierOverrides = 0;
  private passLabels = new Set<string>();
  private stopReason = '';
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  /** A poke came during a tick: one more follows it. */
  private tickAgain = false;
  private passing = false;
  private closed = false;

  constructor(private readonly opts: DedupRunnerOptions) {
    const prev = opts.previous;
    this.status = {
      state: 'idle',
      files_total: prev?.files_total ?? 0,
      files_done: prev?.files_done ?? 0,
      last_started_at: prev?.last_started_at ?? null,
      last_finished_at: prev?.last_finished_at ?? null,
      last_result: prev?.last_result ?? null,
      last_detail: prev?.last_detail ?? '',
      next_at: null,
      host_pause_seconds: prev?.host_pause_seconds ?? 0,
      host_pause_overrides: prev?.host_pause_overrides ?? 0,
    };
    if (prev?.state === 'running') {
      this.status.last_result = 'interrupted';
      this.status.last_finished_at = isoNow();
      this.status.last_detail =
        'the nodeagent stopped during the pass; the next one goes on from the hash file';
    }
  }

  start() {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    void stopOrphans(this.opts.mountpoint, this.opts.logger);
  }

  /** What the storage should be and whether it is mounted (from the storage reconciler). */
  update(spec: StorageSpec | undefined, mounted: boolean) {
    this.spec = spec;
    this.mounted = mounted;
    void this.tick();
  }

  /** The node's status changed (a cartridge loaded, perhaps): looks at the pass now. */
  poke() {
    if (this.ticking) this.tickAgain = true;
    else void this.tick();
  }

  private nextAt(): number | undefined {
    const spec = this.spec;
    if (!spec || spec.deleting || !this.mounted || spec.dedup.paused) return undefined;
    const requested = spec.dedup_requested_at ? Date.parse(spec.dedup_requested_at) : 0;
    const started = this.status.last_started_at ? Date.parse(this.status.last_started_at) : 0;
    if (requested > started) return requested;
    const finished = this.status.last_finished_at ? Date.parse(this.status.last_finished_at) : 0;
    // The first pass comes one interval after the storage was set up, like every later one.
    const since = finished || Date.parse(spec.created_at);
    return since + spec.dedup.interval_minutes * 60_000;
  }

  private set(patch: Partial<DedupStatus>) {
    this.status = { ...this.status, ...patch };
    this.opts.onChange();
  }

  private async tick() {
    if (this.ticking || this.closed) return;
    this.ticking = true;
    try {
      if (this.passing) {
        if (!this.child) return;
        if (!this.spec || this.spec.deleting || !this.mounted) this.interrupt('the storage is going away');
        else if (this.spec.dedup.paused) this.interrupt('paused');
        else {
          const busy = await this.opts.busyLabels();
          const hit = [...this.passLabels].find((l) => busy.has(l));
          if (hit) this.interrupt(`cartridge ${hit} became busy (loaded or in a job); it is left alone`);
        }
        return;
      }
      const next = this.nextAt();
      const paused = this.spec?.dedup.paused === true;
      const nextIso = next !== undefined ? new Date(next).toISOString() : null;
      if (this.status.state !== (paused ? 'paused' : 'idle') || this.status.next_at !== nextIso)
        this.set({ state: paused ? 'paused' : 'idle', next_at: nextIso });
      if (next !== undefined && Date.now() >= next) {
        this.passing = true;
        void this.runPass()
          .catch((err: Error) => this.finish('failed', err.message))
          .finally(() => (this.passing = false));
      }
    } catch (err) {
      this.opts.logger.warn({ err }, 'dedup runner tick failed');
    } finally {
      this.ticking = false;
      if (this.tickAgain) {
        this.tickAgain = false;
        void this.tick();
      }
    }
  }

  private interrupt(reason: string) {
    if (!this.child || this.stopReason) return;
    this.stopReason = reason;
    this.terminate(this.child);
  }

  /** Stops a duperemove run, paused or not (a paused one would hold the SIGTERM pending). */
  private terminate(child: ChildProcess) {
    child.kill('SIGTERM');
    this.pacer?.stop();
  }

  private pausedMs() {
    return this.earlierPausedMs + (this.pacer?.pausedMs ?? 0);
  }

  private overrides() {
    return this.earlierOverrides + (this.pacer?.overrides ?? 0);
  }

  private async runPass() {
    const busy = await this.opts.busyLabels();
    const all = await imageFilesByLabel(await this.opts.poolPaths());
    const byLabel = new Map([...all].filter(([label]) => !busy.has(label)));
    const files = [...byLabel.values()].flat();
    await fs.mkdir(path.dirname(hashFile(this.opts.mountpoint)), { recursive: true });
    // duperemove dedupes every file its hash file holds, listed or not: a busy cartridge that
    // an earlier pass hashed leaves the hash file first (hashed afresh once it is idle again).
    await this.forget([...all].filter(([label]) => busy.has(label)).flatMap(([, f]) => f));
    this.passLabels = new Set(byLabel.keys());
    this.stopReason = '';
    // Milliseconds: a run_now request is a pass only if it is newer than the last start.
    const startedAt = new Date().toISOString();
    this.set({
      state: 'running',
      files_total: files.length,
      files_done: 0,
      last_started_at: startedAt,
      next_at: null,
      host_pause_seconds: 0,
      host_pause_overrides: 0,
    });
    this.earlierPausedMs = 0;
    this.earlierOverrides = 0;
    if (files.length === 0) {
      this.finish('completed', 'no idle cartridge to scan');
      return;
    }
    this.opts.logger.info({ files: files.length, cartridges: byLabel.size }, 'dedup pass started');
    let outcome = await this.runDuperemove(files);
    if (outcome.code !== 0 && !this.stopReason && /Database error|dbfile/i.test(outcome.stderr)) {
      // A pass killed while it wrote the hash file can leave one SQLite cannot read: the file
      // is a cache of hashes, so it goes and this pass reads every file afresh.
      this.opts.logger.warn({ stderr: outcome.stderr }, 'dedup hash file unreadable; starting it afresh');
      await removeHashFile(this.opts.mountpoint);
      outcome = await this.runDuperemove(files);
    }
    if (this.stopReason) this.finish('interrupted', this.stopReason);
    else if (outcome.code === 0)
      this.finish('completed', `${files.length} files of ${byLabel.size} cartridges`);
    else
      this.finish(
        'failed',
        `duperemove exited ${outcome.code}: ${outcome.stderr.trim().split('\n').slice(-2).join('; ') || 'no message'}`,
      );
  }

  /** Removes `files` from the hash file (`duperemove -R`); without it, the whole hash file goes. */
  private async forget(files: string[]) {
    const db = hashFile(this.opts.mountpoint);
    if (files.length === 0 || !(await fs.stat(db).catch(() => undefined))) return;
    const child = spawn('duperemove', [`--hashfile=${db}`, '-R', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    child.stdin.on('error', () => undefined); // a child that died early: its exit code says so
    child.stdin.end(files.join('\n') + '\n');
    const code = await new Promise<number | null>((resolve) => {
      child.once('error', () => resolve(-1));
      child.once('close', resolve);
    });
    if (code !== 0) {
      // A cache: a hash file that cannot be edited is read afresh rather than trusted.
      this.opts.logger.warn(
        { code, stderr },
        'dedup hash file could not drop busy cartridges; starting it afresh',
      );
      await removeHashFile(this.opts.mountpoint);
    }
  }

  /** One duperemove run over `files`, its progress counted from the lines it prints. */
  private async runDuperemove(files: string[]): Promise<{ code: number | null; stderr: string }> {
    const child = spawn('nice', duperemoveArgs(this.opts.mountpoint, files), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const { hostBytes } = this.opts;
    if (hostBytes && child.pid !== undefined)
      this.pacer = new PassPacer({
        pid: child.pid,
        hostBytes,
        maxPauseMs: this.opts.maxPauseMs,
        overrideMs: this.opts.overrideMs,
        onChange: (paused) => {
          const overridden = this.overrides() > this.status.host_pause_overrides;
          this.opts.logger[overridden ? 'info' : 'debug'](
            { paused },
            paused
              ? 'dedup pass paused for host I/O'
              : overridden
                ? 'dedup pass paused for its longest wait; running on despite host I/O'
                : 'dedup pass resumed',
          );
          this.status.host_pause_seconds = Math.round(this.pausedMs() / 1000);
          this.status.host_pause_overrides = this.overrides();
          this.opts.onChange();
        },
      }).start();
    let stderr = '';
    let progressAt = 0;
    let carry = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (carry + chunk).split('\n');
      carry = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^\[(\d+)\/(\d+)\]/.exec(line);
        if (!m) continue;
        this.status.files_done = Number(m[1]);
        this.status.host_pause_seconds = Math.round(this.pausedMs() / 1000);
        if (Date.now() - progressAt > TICK_MS) {
          progressAt = Date.now();
          this.opts.onChange();
        }
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    const code = await new Promise<number | null>((resolve) => {
      child.once('error', (err) => {
        stderr = err.message;
        resolve(-1);
      });
      child.once('close', (c) => resolve(c));
    });
    this.pacer?.stop();
    this.earlierPausedMs = this.pausedMs();
    this.earlierOverrides = this.overrides();
    this.pacer = undefined;
    this.child = undefined;
    return { code, stderr };
  }

  private finish(result: 'completed' | 'interrupted' | 'failed', detail: string) {
    this.opts.logger.info({ result, detail }, 'dedup pass ended');
    this.set({
      state: 'idle',
      files_done: result === 'completed' ? this.status.files_total : this.status.files_done,
      last_finished_at: isoNow(),
      last_result: result,
      last_detail: detail,
      host_pause_seconds: Math.round(this.earlierPausedMs / 1000),
      host_pause_overrides: this.earlierOverrides,
    });
  }

  async stop() {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const child = this.child;
    if (!child) return;
    this.stopReason = 'the nodeagent stopped';
    const closed = new Promise((resolve) => child.once('close', resolve));
    this.terminate(child);
    await Promise.race([closed, new Promise((r) => setTimeout(r, 2_000))]);
  }
}
