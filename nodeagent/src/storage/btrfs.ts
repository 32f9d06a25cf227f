import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** The label every filesystem this appliance makes carries: how a restart finds its own storage. */
export const STORAGE_LABEL = 'vtl-storage';
/** statfs f_type of btrfs. */
export const BTRFS_MAGIC = 0x9123683e;

/** Runs a btrfs-progs (or util-linux) command; its stderr becomes the error's message. */
export async function run(cmd: string, args: string[], timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await exec(cmd, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; code?: string | number };
    if (e.code === 'ENOENT')
      throw new Error(`${cmd} is not installed (Debian: btrfs-progs, btrfs-compsize, duperemove)`);
    const why = (e.stderr ?? '').trim().split('\n').slice(-3).join('; ') || e.message;
    throw new Error(`${cmd} ${args.join(' ')}: ${why}`);
  }
}

/** Makes the filesystem: data single (every device's space adds up), metadata mirrored from two devices. */
export async function mkfs(devices: string[], force: boolean): Promise<void> {
  const metadata = devices.length >= 2 ? 'raid1' : 'dup';
  await run('mkfs.btrfs', [
    ...(force ? ['-f'] : []),
    '-q',
    '-L',
    STORAGE_LABEL,
    '-d',
    'single',
    '-m',
    metadata,
    ...devices,
  ]);
}

export async function mount(device: string, mountpoint: string): Promise<void> {
  // Every member must be known to the kernel before a multi-device filesystem mounts.
  await run('btrfs', ['device', 'scan']).catch(() => undefined);
  await run('mount', ['-t', 'btrfs', '-o', 'noatime', device, mountpoint]);
}

export async function unmount(mountpoint: string): Promise<void> {
  await run('umount', [mountpoint]);
}

/** Device paths (as the kernel names them) and uuid of the mounted filesystem. */
export async function members(mountpoint: string): Promise<{ uuid: string | null; devices: string[] }> {
  const out = await run('btrfs', ['filesystem', 'show', '--raw', mountpoint]);
  const uuid = /uuid:\s*([0-9a-f-]{36})/.exec(out)?.[1] ?? null;
  const devices = [...out.matchAll(/devid\s+\d+\s+size\s+\d+\s+used\s+\d+\s+path\s+(\S+)/g)].map(
    (m) => m[1] as string,
  );
  return { uuid, devices };
}

export async function addDevice(device: string, mountpoint: string, force: boolean): Promise<void> {
  await run('btrfs', ['device', 'add', ...(force ? ['-f'] : []), device, mountpoint]);
}

/** The metadata profile (dup, raid1, ...) of the mounted filesystem. */
export async function metadataProfile(mountpoint: string): Promise<string | null> {
  const out = await run('btrfs', ['filesystem', 'df', '-b', mountpoint]);
  return /^Metadata,\s*(\w+):/m.exec(out)?.[1]?.toLowerCase() ?? null;
}

/** Mirrors metadata once there are two devices (`soft`: chunks already raid1 are skipped). */
export async function mirrorMetadata(mountpoint: string): Promise<void> {
  await run('btrfs', ['balance', 'start', '-mconvert=raid1,soft', mountpoint], 600_000);
}

/** Raw size of every device and the bytes allocated on them (`btrfs filesystem usage`). */
export async function usage(mountpoint: string): Promise<{ size: number; used: number }> {
  const out = await run('btrfs', ['filesystem', 'usage', '-b', mountpoint]);
  const num = (name: string) => Number(new RegExp(`^\\s*${name}:\\s*(\\d+)`, 'm').exec(out)?.[1] ?? 0);
  return { size: num('Device size'), used: num('Used') };
}

/** Probed filesystem signature of a device (blkid -p, no cache): TYPE, LABEL, UUID, or none. */
export async function probe(device: string): Promise<Record<string, string> | undefined> {
  try {
    const { stdout } = await exec('blkid', ['-p', '-o', 'export', device], { timeout: 30_000 });
    return Object.fromEntries(
      stdout
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
  } catch (err) {
    // blkid exits 2 when it finds no signature.
    if ((err as { code?: number }).code === 2) return undefined;
    throw err;
  }
}

/** Removes every signature from a device (after a teardown), so it can be named again without force. */
export async function wipe(device: string): Promise<void> {
  await run('wipefs', ['-a', '-q', device]);
}

export async function createSubvolume(path: string): Promise<void> {
  await run('btrfs', ['subvolume', 'create', path]);
}

export async function deleteSubvolume(path: string): Promise<void> {
  await run('btrfs', ['subvolume', 'delete', path]);
}

export async function isSubvolume(path: string): Promise<boolean> {
  return run('btrfs', ['subvolume', 'show', path]).then(
    () => true,
    () => false,
  );
}

/** Sets a subvolume's compression: new writes compress with it (`none` turns it off). */
export async function setCompression(path: string, compression: string): Promise<void> {
  await run('btrfs', ['property', 'set', path, 'compression', compression === 'none' ? 'none' : compression]);
}

export async function getCompression(path: string): Promise<string> {
  const out = await run('btrfs', ['property', 'get', path, 'compression']);
  return /compression=(\S+)/.exec(out)?.[1] ?? 'none';
}

/** Extents under a path (compsize): on disk after compression, uncompressed, referenced. */
export async function extentBytes(
  paths: string[],
): Promise<{ disk: number; uncompressed: number; referenced: number }> {
  let out: string;
  try {
    out = await run('compsize', ['-b', ...paths], 300_000);
  } catch (err) {
    // compsize refuses a tree with no data extents yet ("No files.").
    if (/No files/.test((err as Error).message)) return { disk: 0, uncompressed: 0, referenced: 0 };
    throw err;
  }
  const total = /^TOTAL\s+\d+%\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(out);
  if (!total) return { disk: 0, uncompressed: 0, referenced: 0 };
  return { disk: Number(total[1]), uncompressed: Number(total[2]), referenced: Number(total[3]) };
}
