import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as btrfs from '@vtl/nodeagent/storage/btrfs';
import { command } from './processes.js';

/** A compressing pool on btrfs over loop devices, as the nodeagent makes one (docs/storage.md). */
export interface BenchPool {
  /** The mounted filesystem: the shared storage. */
  mountpoint: string;
  /** The pool's subvolume, where the contenders write. */
  dir: string;
  /** Unmounts, detaches the loop devices and deletes their files; safe to call twice. */
  release(): Promise<void>;
}

/**
 * Two sparse files of `deviceBytes` each behind loop devices in a new directory under
 * `parent`, made into shared storage with the nodeagent's own steps (mkfs.btrfs with data
 * single and metadata raid1, mounted noatime) and one pool subvolume with `compression`. Needs
 * root and btrfs-progs. Whatever was set up is undone if a later step fails.
 */
export async function btrfsPool(
  parent: string,
  deviceBytes: number,
  compression: string,
): Promise<BenchPool> {
  const dir = await mkdtemp(join(parent, 'vtl-bench-btrfs-'));
  const devices: string[] = [];
  const mountpoint = join(dir, 'storage');
  let mounted = false;
  const release = async () => {
    if (mounted) await command('umount', [mountpoint]).catch(() => command('umount', ['-l', mountpoint]));
    mounted = false;
    for (const dev of devices.splice(0)) await command('losetup', ['-d', dev]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 2; i++) {
      const file = join(dir, `disk${i}.img`);
      await writeFile(file, '');
      await truncate(file, deviceBytes);
      devices.push((await command('losetup', ['-f', '--show', file])).trim());
    }
    await btrfs.mkfs(devices, false);
    await mkdir(mountpoint);
    await btrfs.mount(devices[0]!, mountpoint);
    mounted = true;
    const pool = join(mountpoint, 'pools', 'bench');
    await mkdir(join(mountpoint, 'pools'));
    await btrfs.createSubvolume(pool);
    await btrfs.setCompression(pool, compression);
    return { mountpoint, dir: pool, release };
  } catch (err) {
    await release();
    throw err;
  }
}
