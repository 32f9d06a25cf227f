import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDeferred } from './deferred-sync.js';

/** fsync a directory so a rename or unlink inside it survives a power loss. */
export async function fsyncDir(dir: string): Promise<void> {
  if (syncDeferred()) return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replace `path` with `data` so that a crash at any point leaves either the old or the new
 * content, never a torn file: write a temp file beside it, fsync, rename, fsync the directory.
 */
export async function writeFileAtomic(path: string, data: string | Buffer): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const handle = await open(tmp, 'w', 0o644);
  try {
    await handle.writeFile(data);
    if (!syncDeferred()) await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await fsyncDir(dirname(path));
}
