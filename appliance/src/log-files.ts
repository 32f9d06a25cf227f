import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Logs may name users, remotes and paths, and a client can put anything in a URL: only the
 * appliance's own user reads them. The directory is 0700 and every file 0600, also when they
 * already exist from an older version that created them world-readable.
 */
export async function prepareLogDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.chmod(dir, 0o700);
  for (const name of await fs.readdir(dir)) {
    const file = path.join(dir, name);
    if ((await fs.lstat(file)).isFile()) await fs.chmod(file, 0o600);
  }
}

/** Creates a log file 0600 (or tightens an existing one) before a writer appends to it. */
export async function prepareLogFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'a', 0o600);
  try {
    await handle.chmod(0o600);
  } finally {
    await handle.close();
  }
}
