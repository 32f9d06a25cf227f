import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import { waitFor } from '@vtl/reconcile';
import { census, processesOf, type Role } from './processes.js';

/** The processes a control-plane restart (or the launcher's supervision) concerns. */
export const CONTROL_PLANE: Role[] = ['apiserver', 'controller', 'nodeagent'];

/** True while a process with this pid exists (a zombie included). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when the pid has exited: gone, or a zombie its parent has not reaped yet. */
export async function isZombie(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat === '' || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/** Sends `signal` and resolves with how long the process took to go away (rejects after limitMs). */
export async function timeToExit(pid: number, signal: NodeJS.Signals, limitMs: number): Promise<number> {
  const t0 = Date.now();
  process.kill(pid, signal);
  await waitFor(async () => !alive(pid) || (await isZombie(pid)), { timeoutMs: limitMs, intervalMs: 50 });
  return Date.now() - t0;
}

/**
 * Sends `signal` to the first process of each role at once and resolves with each one's time to
 * exit in ms (Infinity when it did not within limitMs), for the caller to assert on.
 */
export async function exitTimes(
  running: Record<Role, number[]>,
  roles: Role[],
  signal: NodeJS.Signals,
  limitMs: number,
): Promise<Partial<Record<Role, number>>> {
  const times = await Promise.all(
    roles.map(async (role) => [
      role,
      await timeToExit(running[role][0]!, signal, limitMs).catch(() => Infinity),
    ]),
  );
  return Object.fromEntries(times) as Partial<Record<Role, number>>;
}

/**
 * Waits until no process of the state dir runs except the given roles' (e.g. the emulator, which
 * outlives its launcher) and resolves with what runs then; the error lists what was left.
 */
export async function waitUntilOnly(
  stateDir: string,
  opts: { keep?: Role[]; timeoutMs: number; what?: string },
): Promise<Record<Role, number[]>> {
  const keep = new Set(opts.keep ?? []);
  let last: Record<Role, number[]> | undefined;
  try {
    await waitFor(
      async () => {
        last = await processesOf(stateDir);
        return Object.entries(last).every(([role, pids]) => keep.has(role as Role) || pids.length === 0);
      },
      { timeoutMs: opts.timeoutMs, intervalMs: 100 },
    );
    return last!;
  } catch {
    throw new Error(`${opts.what ?? 'left running'}: ${JSON.stringify(census(await processesOf(stateDir)))}`);
  }
}

/** Runs a command to its exit and resolves with its exit code, its output and how long it took. */
export function runToExit(
  argv: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; output: string; ms: number }> {
  const [command, ...args] = argv;
  const child = spawn(command!, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const t0 = Date.now();
  return new Promise((resolve) =>
    child.once('exit', (code) => resolve({ code, output, ms: Date.now() - t0 })),
  );
}
