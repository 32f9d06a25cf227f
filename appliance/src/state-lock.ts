import fs from 'node:fs/promises';
import path from 'node:path';
import { identify, stillRuns, type ProcessIdentity } from '@vtl/reconcile/process-identity';

/** A start against a state directory that a running appliance holds. */
export class StateDirInUseError extends Error {
  readonly code = 'state_dir_in_use';
  constructor(
    readonly stateDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `The state directory ${stateDir} is in use by the appliance running as pid ${holder.pid} ` +
        `(since ${holder.since}). Stop that one first (kill ${holder.pid}; it stops everything it ` +
        'started), or give this start another VTL_STATE_DIR.',
    );
  }
}

/** What the lock file holds: who owns the state directory. */
export interface LockHolder extends ProcessIdentity {
  since: string;
}

/** An exclusive hold on a state directory, released on a clean stop. */
export interface StateLock {
  readonly file: string;
  release(): Promise<void>;
}

/** The lock file of a state directory; the pid files sit beside it. */
export const runDir = (stateDir: string) => path.join(stateDir, 'run');
export const lockFile = (stateDir: string) => path.join(runDir(stateDir), 'appliance.lock');

/**
 * Takes the state directory for this process. The lock file is created exclusively (O_EXCL);
 * one left by a process that no longer runs (a crash, kill -9: checked by pid and start time,
 * so a recycled pid does not count) is replaced. A live holder makes this throw
 * StateDirInUseError at once.
 */
export async function lockStateDir(stateDir: string, since = new Date()): Promise<StateLock> {
  const file = lockFile(stateDir);
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const me = await identify(process.pid);
  if (!me) throw new Error(`cannot read /proc/${process.pid}/stat: is /proc mounted?`);
  const holder: LockHolder = { ...me, since: since.toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await fs.writeFile(file, JSON.stringify(holder) + '\n', { flag: 'wx', mode: 0o600 });
      return { file, release: () => releaseIfOurs(file, holder) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const current = await readHolder(file);
    if (current && (await stillRuns(current))) throw new StateDirInUseError(stateDir, current);
    // Stale (or unreadable: a crash while writing it). Remove it and try again; if another start
    // got there first, the next attempt sees its live lock.
    await fs.rm(file, { force: true });
  }
  throw new Error(`could not take ${file}: another start keeps replacing it`);
}

/** The holder recorded in a lock file, if the file exists and parses. */
export async function readHolder(file: string): Promise<LockHolder | undefined> {
  const text = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.started !== 'string') return undefined;
    return { pid: parsed.pid, started: parsed.started, since: String(parsed.since ?? '') };
  } catch {
    return undefined;
  }
}

async function releaseIfOurs(file: string, holder: LockHolder): Promise<void> {
  const current = await readHolder(file);
  if (current?.pid === holder.pid && current.started === holder.started) await fs.rm(file, { force: true });
}
