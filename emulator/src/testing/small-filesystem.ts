import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { makeTempDir } from '../util/temp-dir.js';

const run = promisify(execFile);

/**
 * A real filesystem of `bytes` (a tmpfs mounted on a temp dir), so tests see a pool filling
 * up as the kernel reports it: writes past the size fail with ENOSPC. Mounting needs root,
 * which the test suite runs as (`.ci/run`). tmpfs has no O_DIRECT: writes take the page-cache
 * path there.
 */
export async function mountSmallFilesystem(
  bytes: number,
): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const dir = await makeTempDir('vtl-small-fs-');
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir.path]);
  } catch (err) {
    await dir.cleanup();
    throw new Error(`cannot mount a ${bytes}-byte tmpfs (tests run as root): ${String(err)}`);
  }
  return {
    path: dir.path,
    cleanup: async () => {
      await run('umount', [dir.path]);
      await dir.cleanup();
    },
  };
}
