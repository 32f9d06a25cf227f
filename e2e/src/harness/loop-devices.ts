import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Why tests on real btrfs over loop devices cannot run here, or undefined when they can: they
 * need root (losetup, mkfs, mount) and Debian's btrfs-progs and btrfs-compsize
 * (scripts/install-test-deps.sh installs them).
 */
export function btrfsSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (loop devices, mkfs.btrfs, mount)';
  for (const tool of ['mkfs.btrfs', 'btrfs', 'compsize', 'losetup', 'wipefs'])
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed (sudo bash scripts/install-test-deps.sh)`;
    }
  return undefined;
}

/** Sparse files behind loop devices, detached and deleted by release() (also after a failure). */
export class LoopDevices {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vtl-loops-'));
  private readonly attached: string[] = [];
  private readonly mounts: string[] = [];

  /** A loop device over a new sparse file of `bytes`. */
  attach(bytes: number): string {
    const file = path.join(this.dir, `disk${this.attached.length}.img`);
    fs.writeFileSync(file, '');
    fs.truncateSync(file, bytes);
    const dev = execFileSync('losetup', ['-f', '--show', file], { encoding: 'utf8' }).trim();
    this.attached.push(dev);
    return dev;
  }

  /** A mount to undo at release (a test's own, or the storage the appliance mounted). */
  unmountAtRelease(mountpoint: string) {
    this.mounts.push(mountpoint);
  }

  release() {
    for (const m of this.mounts)
      try {
        execFileSync('umount', ['-l', m], { stdio: 'ignore' });
      } catch {
        // not mounted
      }
    for (const dev of this.attached)
      try {
        execFileSync('losetup', ['-d', dev], { stdio: 'ignore' });
      } catch {
        // gone already
      }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });
