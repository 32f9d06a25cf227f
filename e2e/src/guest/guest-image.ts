import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** The guest's boot files, built by scripts/build-guest.sh from Debian packages. */
export interface GuestImage {
  dir: string;
  kernel: string;
  initrd: string;
  /** `package=version` lines of what the image was built from. */
  packages: string;
}

/** The QEMU binary the host tier needs, or undefined when it is not installed. */
export async function findQemu(): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'qemu-system-x86_64');
    if (
      await fs.access(candidate, fs.constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return undefined;
}

/**
 * Builds the guest image, or finds it in the cache (`$VTL_GUEST_CACHE`, default
 * /var/cache/vtl-guest) when the same package versions were built before.
 */
export async function ensureGuestImage(): Promise<GuestImage> {
  const script = path.join(repoRoot, 'scripts/build-guest.sh');
  let stdout: string;
  try {
    ({ stdout } = await run('bash', [script], { maxBuffer: 16 << 20, timeout: 15 * 60_000 }));
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(
      `building the guest image failed (run bash ${script} to see why): ${e.stderr ?? e.message}`,
    );
  }
  const dir = stdout.trim().split('\n').pop()!;
  return {
    dir,
    kernel: path.join(dir, 'vmlinuz'),
    initrd: path.join(dir, 'initrd.img'),
    packages: await fs.readFile(path.join(dir, 'packages.txt'), 'utf8'),
  };
}
