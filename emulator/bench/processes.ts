import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { access, open, readdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

/** What every measured run prints: payload bytes, wall seconds, CPU seconds of the worker. */
export interface RunResult {
  bytes: number;
  seconds: number;
  cpuSeconds: number;
  /** The part of cpuSeconds the worker spent in the kernel (initiator runs). */
  systemSeconds?: number;
  /** process.hrtime.bigint() at the start and end of the timed span (initiator runs). */
  startNs?: string;
  endNs?: string;
  /** The MaxBurstLength the initiator's login settled on (initiator runs). */
  maxBurst?: number;
  /** Seconds of the closing sync point (WRITE FILEMARKS) at the end of `seconds` (initiator runs). */
  syncSeconds?: number;
  /** CPU seconds of the target process (emulator, tgtd) during the run, where known. */
  targetCpuSeconds?: number;
  /** The part of targetCpuSeconds spent in the kernel. */
  targetSystemSeconds?: number;
  /** CPU seconds of the target's main thread (the emulator's event loop) during the run. */
  targetMainThreadCpuSeconds?: number;
  /** Cores the whole machine kept busy while the blocks streamed (initiator runs; not the closing sync). */
  machineBusyCores?: number;
}

/** USER_HZ: Linux reports CPU times in /proc in 1/100 s on every architecture Node runs on. */
export const USER_HZ = 100;

const run = promisify(execFile);

/** Runs a worker script with node and parses the JSON line it prints. */
export async function runWorker(script: string, args: string[]): Promise<RunResult> {
  try {
    const { stdout } = await run(process.execPath, [script, ...args], { maxBuffer: 1 << 20 });
    return JSON.parse(stdout.trim().split('\n').pop()!) as RunResult;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`${script} ${args.join(' ')} failed: ${stderr.trim() || String(err)}`);
  }
}

/** Whether a program is on the PATH or in one of `extraDirs`. */
export async function onPath(program: string, extraDirs: string[] = []): Promise<boolean> {
  const dirs = (process.env.PATH ?? '').split(delimiter).concat(extraDirs);
  return Promise.any(dirs.map((d) => access(join(d, program)))).then(
    () => true,
    () => false,
  );
}

/** Runs a command and returns its stdout; failures carry its stderr. */
export async function command(file: string, args: string[]): Promise<string> {
  try {
    return (await run(file, args)).stdout;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`${file} ${args.join(' ')} failed: ${stderr.trim() || String(err)}`);
  }
}

/** Spawns a long-running process and resolves with the first line it prints on stdout. */
export async function spawnUntilLine(
  file: string,
  args: string[],
): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${file} ${args.join(' ')} exited with ${String(code)} before it was ready`);
  });
  const line = await Promise.race([once(lines, 'line').then(([l]) => l as string), exited]);
  lines.close();
  child.stdout!.resume();
  return { child, line };
}

/** Sends SIGTERM and waits for the exit; SIGKILL after `graceMs`. */
export async function terminate(child: ChildProcess, graceMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** fsyncs every regular file under a path (a file or a directory); returns the seconds it took. */
export async function fsyncAll(path: string): Promise<number> {
  const start = process.hrtime.bigint();
  const entries = await readdir(path, { withFileTypes: true }).catch(() => undefined);
  const files = entries ? entries.filter((e) => e.isFile()).map((e) => join(path, e.name)) : [path];
  for (const file of files) {
    const handle = await open(file, 'r');
    await handle.sync();
    await handle.close();
  }
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/**
 * Writes back dirty pages and empties the page cache, so every contender starts from a cold
 * cache and none pays for another's writeback. Needs root; returns false when not allowed.
 */
export async function dropCaches(): Promise<boolean> {
  await command('sync', []);
  try {
    await writeFile('/proc/sys/vm/drop_caches', '3');
    return true;
  } catch {
    return false;
  }
}

/**
 * Seconds every core of the machine has spent busy so far (/proc/stat: all but idle and
 * iowait; steal counts, since a core the hypervisor withheld was wanted). Its difference over
 * the stream, per second, is how many cores the whole machine kept busy while the blocks
 * moved: emulator, initiator, the kernel's loopback TCP and anything else.
 */
export function machineBusySeconds(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
  return (user + nice + system + irq + softirq + steal) / USER_HZ;
}
