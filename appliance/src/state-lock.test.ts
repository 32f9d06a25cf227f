import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { identify } from '@vtl/reconcile';
import { lockFile, lockStateDir, readHolder, StateDirInUseError } from './state-lock.js';

/** A real other process that holds (or held) the lock, written the way lockStateDir writes it. */
async function otherHolder(stateDir: string, alive: boolean) {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  const who = (await identify(child.pid!))!;
  await fs.mkdir(path.dirname(lockFile(stateDir)), { recursive: true });
  await fs.writeFile(lockFile(stateDir), JSON.stringify({ ...who, since: '2026-01-01T00:00:00.000Z' }));
  if (!alive) {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  return { pid: child.pid!, stop: () => child.kill('SIGKILL') };
}

describe('the state directory lock', () => {
  let stateDir: string;
  beforeEach(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-lock-'));
  });
  afterEach(async () => {
    await fs.rm(stateDir, { recursive: true, force: true });
  });

  it('is taken by this process and given back on release', async () => {
    const lock = await lockStateDir(stateDir);
    const holder = await readHolder(lockFile(stateDir));
    expect(holder?.pid).toBe(process.pid);
    expect((await fs.stat(lockFile(stateDir))).mode & 0o777).toBe(0o600);
    await lock.release();
    await expect(fs.access(lockFile(stateDir))).rejects.toThrow();
    // Free again: the next start takes it.
    await (await lockStateDir(stateDir)).release();
  });

  it('refuses a second start at once while the holder runs, saying who holds it and what to do', async () => {
    const other = await otherHolder(stateDir, true);
    try {
      const err = await lockStateDir(stateDir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StateDirInUseError);
      expect((err as Error).message).toContain(`in use by the appliance running as pid ${other.pid}`);
      expect((err as Error).message).toContain(`kill ${other.pid}`);
      expect((err as Error).message).toContain('VTL_STATE_DIR');
      // The holder's lock is untouched.
      expect((await readHolder(lockFile(stateDir)))?.pid).toBe(other.pid);
    } finally {
      other.stop();
    }
  });

  it('replaces a lock whose process is gone (kill -9 of the previous run)', async () => {
    const other = await otherHolder(stateDir, false);
    const lock = await lockStateDir(stateDir);
    expect((await readHolder(lockFile(stateDir)))?.pid).toBe(process.pid);
    expect(other.pid).not.toBe(process.pid);
    await lock.release();
  });

  it('does not take a recycled pid for the holder: the start time must match too', async () => {
    const me = (await identify(process.pid))!;
    await fs.mkdir(path.dirname(lockFile(stateDir)), { recursive: true });
    // This pid runs, but it is not the process that wrote the lock (another start time).
    await fs.writeFile(
      lockFile(stateDir),
      JSON.stringify({ pid: me.pid, started: `${me.started}0`, since: '' }),
    );
    const lock = await lockStateDir(stateDir);
    expect((await readHolder(lockFile(stateDir)))?.started).toBe(me.started);
    await lock.release();
  });

  it('replaces a lock file cut short by a crash while it was written', async () => {
    await fs.mkdir(path.dirname(lockFile(stateDir)), { recursive: true });
    await fs.writeFile(lockFile(stateDir), '{"pid":12');
    const lock = await lockStateDir(stateDir);
    expect((await readHolder(lockFile(stateDir)))?.pid).toBe(process.pid);
    await lock.release();
  });

  it('release leaves a lock that another process took since alone', async () => {
    const lock = await lockStateDir(stateDir);
    const other = await otherHolder(stateDir, true);
    try {
      await lock.release();
      expect((await readHolder(lockFile(stateDir)))?.pid).toBe(other.pid);
    } finally {
      other.stop();
    }
  });
});
