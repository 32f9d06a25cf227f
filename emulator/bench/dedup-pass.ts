import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { duperemoveArgs, hashFile } from '@vtl/nodeagent/storage/dedup-pass';
import { PassPacer } from '@vtl/nodeagent/storage/dedup-pacer';

/**
 * A dedup pass over `files` as the nodeagent runs one (its duperemove arguments, nice and
 * ionice included; paced by its PassPacer when `hostBytes` counts a host's bytes). `done`
 * resolves with its seconds; after freshHashFile() it reads every byte.
 */
export function startPass(mountpoint: string, files: string[], hostBytes?: () => Promise<number>) {
  const started = process.hrtime.bigint();
  const child = spawn('nice', duperemoveArgs(mountpoint, files), { stdio: ['ignore', 'ignore', 'pipe'] });
  const pacer =
    hostBytes && child.pid !== undefined ? new PassPacer({ pid: child.pid, hostBytes }).start() : undefined;
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-2000)));
  const done = once(child, 'close').then(([code]) => {
    pacer?.stop();
    if (code !== 0) throw new Error(`duperemove exited ${String(code)}: ${stderr.trim()}`);
    return Number(process.hrtime.bigint() - started) / 1e9;
  });
  return {
    child,
    done,
    running: () => child.exitCode === null && child.signalCode === null,
    pausedSeconds: () => (pacer?.pausedMs ?? 0) / 1000,
  };
}

/** Removes the pass's hash file: the next pass reads every byte again. */
export async function freshHashFile(mountpoint: string) {
  await mkdir(join(mountpoint, '.vtl-dedup'), { recursive: true });
  for (const suffix of ['', '-journal', '-wal', '-shm'])
    await rm(hashFile(mountpoint) + suffix, { force: true });
}
