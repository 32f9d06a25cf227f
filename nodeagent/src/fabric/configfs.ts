import fs from 'node:fs/promises';
import path from 'node:path';

const isErr = (err: unknown, code: string) => (err as NodeJS.ErrnoException | undefined)?.code === code;

/** How long a write waits for a default group that should come with its parent. */
const DEFAULT_GROUP_WAIT_MS = 2_000;

/**
 * configfs creates a group's default groups and attributes together with it; the tests'
 * kernel-like tree makes them a moment later. A write into one that is missing waits briefly
 * for it (no wait at all on the kernel), then fails with the original error.
 */
async function withParent<T>(file: string, op: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + DEFAULT_GROUP_WAIT_MS;
  let parentSeen = false;
  for (;;) {
    try {
      return await op();
    } catch (err) {
      if (!isErr(err, 'ENOENT') || Date.now() > deadline) throw err;
      const parentThere = await fs.stat(path.dirname(file)).then(
        () => true,
        () => false,
      );
      // The parent may have appeared between the attempt and the check: one more try then.
      if (parentThere && parentSeen) throw err;
      parentSeen ||= parentThere;
      if (!parentThere) await new Promise((r) => setTimeout(r, 10));
    }
  }
}

/**
 * The configfs tree under a configurable root (`/sys/kernel/config` on an appliance). Every
 * write is a plain mkdir/rmdir/symlink/unlink/write, as the kernel expects them; the methods
 * are idempotent so a pass interrupted half-way is finished by the next one.
 */
export class ConfigFs {
  constructor(readonly root: string) {}

  /** Absolute path of a configfs-relative one. */
  path(...parts: string[]): string {
    return path.join(this.root, ...parts);
  }

  async exists(rel: string): Promise<boolean> {
    return fs.lstat(this.path(rel)).then(
      () => true,
      () => false,
    );
  }

  /** Creates a group (directory); existing is fine. Parents must exist, as in configfs. */
  async ensureGroup(rel: string): Promise<void> {
    const abs = this.path(rel);
    await withParent(abs, () => fs.mkdir(abs)).catch((err: unknown) => {
      if (!isErr(err, 'EEXIST')) throw err;
    });
  }

  /**
   * Removes a group. configfs drops a group's attributes and default groups itself; a plain
   * tree (tests' stand-in) keeps them as files, so they go the ordinary way — but a symlink
   * left inside is a real dependency (a mapped LUN, a LUN's backstore) and fails the removal
   * exactly as the kernel refuses it.
   */
  async removeGroup(rel: string): Promise<void> {
    const abs = this.path(rel);
    const deadline = Date.now() + DEFAULT_GROUP_WAIT_MS;
    for (;;) {
      try {
        await fs.rmdir(abs);
        return;
      } catch (err) {
        if (isErr(err, 'ENOENT')) return;
        if (!isErr(err, 'ENOTEMPTY') && !isErr(err, 'EEXIST')) throw err;
        // A stand-in tree may still be adding default attributes while they are removed: clear
        // them and try again until it has settled (the kernel never gets here).
        await this.removeAttributes(abs, err as Error).catch((again: unknown) => {
          if (!isErr(again, 'ENOENT')) throw again;
        });
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  }

  private async removeAttributes(dir: string, cause: Error): Promise<void> {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) throw cause;
      if (entry.isDirectory()) {
        await this.removeAttributes(p, cause);
        await fs.rmdir(p);
      } else await fs.unlink(p);
    }
  }

  /** Child group names (directories) of a group; none when it does not exist. */
  async groups(rel: string): Promise<string[]> {
    const entries = await fs.readdir(this.path(rel), { withFileTypes: true }).catch((err: unknown) => {
      if (isErr(err, 'ENOENT')) return [];
      throw err;
    });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  }

  /** Symlinks directly inside a group, with their absolute targets. */
  async links(rel: string): Promise<{ name: string; target: string }[]> {
    const entries = await fs.readdir(this.path(rel), { withFileTypes: true }).catch(() => []);
    const out: { name: string; target: string }[] = [];
    for (const e of entries.filter((x) => x.isSymbolicLink())) {
      const target = await fs.readlink(path.join(this.path(rel), e.name));
      out.push({ name: e.name, target: path.resolve(this.path(rel), target) });
    }
    return out;
  }

  /** Links `rel` to the group at `targetRel`; an existing link is left as it is. */
  async ensureLink(targetRel: string, rel: string): Promise<void> {
    await fs.symlink(this.path(targetRel), this.path(rel)).catch((err: unknown) => {
      if (!isErr(err, 'EEXIST')) throw err;
    });
  }

  async unlink(rel: string): Promise<void> {
    await fs.unlink(this.path(rel)).catch((err: unknown) => {
      if (!isErr(err, 'ENOENT')) throw err;
    });
  }

  /** An attribute's value, trimmed; undefined when it does not exist. */
  async read(rel: string): Promise<string | undefined> {
    return fs.readFile(this.path(rel), 'utf8').then(
      (s) => s.trim(),
      () => undefined,
    );
  }

  /** Writes an attribute (one write, as configfs attributes take it). */
  async write(rel: string, value: string): Promise<void> {
    const abs = this.path(rel);
    await withParent(abs, () => fs.writeFile(abs, value));
  }
}
