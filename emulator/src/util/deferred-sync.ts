import { AsyncLocalStorage } from 'node:async_hooks';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const scope = new AsyncLocalStorage<boolean>();
const run = promisify(execFile);

/**
 * True inside withDeferredSync: per-file fsyncs are skipped because the caller makes the
 * whole batch durable at once with syncFilesystem() before anything refers to it. On a disk
 * that serialises flushes, 400 cartridge images cost ~3,600 fsyncs one by one and two here.
 */
export function syncDeferred(): boolean {
  return scope.getStore() === true;
}

/** Runs fn with per-file fsyncs deferred; the caller must call syncFilesystem() before publishing. */
export function withDeferredSync<T>(fn: () => Promise<T>): Promise<T> {
  return scope.run(true, fn);
}

/** Flushes the whole filesystem holding `path` (syncfs(2), via coreutils `sync -f`). */
export async function syncFilesystem(path: string): Promise<void> {
  await run('sync', ['-f', path]);
}
