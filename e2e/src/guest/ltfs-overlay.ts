import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { cpioArchive, type CpioFile } from './cpio.js';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** Where LTFS is built (and cached: build-ltfs.sh does nothing when the build is there). */
export const LTFS_PREFIX = process.env.VTL_LTFS_PREFIX ?? '/var/cache/vtl-ltfs';

/**
 * The LTFS build script beside its source (the shared peers directory, `../shared/peers` of the
 * lead's checkout), or undefined when this machine has none: the LTFS test is then skipped.
 */
export async function findLtfsBuildScript(): Promise<string | undefined> {
  const candidates = [
    process.env.VTL_LTFS_BUILD_SCRIPT,
    path.resolve(repoRoot, '../shared/peers/build-ltfs.sh'),
    '/work/shared/peers/build-ltfs.sh',
  ];
  for (const c of candidates) {
    if (
      c &&
      (await fs.access(c).then(
        () => true,
        () => false,
      ))
    )
      return c;
  }
  return undefined;
}

async function isElf(file: string): Promise<boolean> {
  const h = await fs.open(file, 'r');
  try {
    const b = Buffer.alloc(4);
    await h.read(b, 0, 4, 0);
    return b.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    await h.close();
  }
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else out.push(p);
  }
  return out;
}

/**
 * Builds LTFS on first use (about 3 minutes, cached in LTFS_PREFIX) and returns a cpio archive
 * to append to the guest's initramfs: the LTFS install tree at the same path (its plugin
 * configuration names absolute paths) and every shared library its programs and plugins link
 * (libfuse2, libxml2, ICU, libuuid... as this Debian 12 host has them, the guest's release).
 */
export async function ltfsOverlay(buildScript: string): Promise<Buffer> {
  try {
    await run('bash', [buildScript, LTFS_PREFIX], { maxBuffer: 16 << 20, timeout: 30 * 60_000 });
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `building LTFS failed (run bash ${buildScript} ${LTFS_PREFIX} to see why): ${e.stderr ?? e.message}`,
    );
  }
  const tree = (await walk(LTFS_PREFIX)).filter(
    (f) =>
      !f.includes('/include/') &&
      !f.endsWith('.a') &&
      !f.endsWith('.la') &&
      !path.basename(f).startsWith('.'),
  );
  const libs = new Set<string>();
  for (const f of tree) {
    if (!(await isElf(f))) continue;
    const { stdout } = await run('ldd', [f]).catch(() => ({ stdout: '' }));
    for (const m of stdout.matchAll(/=> (\/\S+)/g)) if (!m[1]!.startsWith(LTFS_PREFIX)) libs.add(m[1]!);
    for (const m of stdout.matchAll(/^\s*(\/lib64\/\S+)/gm)) libs.add(m[1]!);
  }
  const files: CpioFile[] = [];
  const dirs = new Set<string>();
  const add = async (file: string) => {
    for (let d = path.dirname(file); d !== '/' && !dirs.has(d); d = path.dirname(d)) dirs.add(d);
    // Symlinks are copied as the file they name: the guest needs the bytes under this name.
    const st = await fs.stat(file);
    files.push({ name: file, data: await fs.readFile(file), mode: st.mode & 0o777 });
  };
  for (const f of [...tree, ...libs]) await add(f);
  // libfuse2 runs /bin/mount to update /etc/mtab unless it is a link to the kernel's list.
  files.push({ name: '/etc/mtab', data: '', symlink: '/proc/self/mounts' });
  const dirEntries: CpioFile[] = [...dirs]
    .sort((a, b) => a.split('/').length - b.split('/').length)
    .map((d) => ({ name: d, data: '', dir: true }));
  return cpioArchive([...dirEntries, ...files]);
}
