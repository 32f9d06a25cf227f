import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Release directories of the single-node appliance (docs/updates.md):
 *
 *   <releases>/factory -> the installed tree (the launcher writes it at every start)
 *   <releases>/current -> the release the control plane runs; absent = factory
 *   <releases>/<version>-<id>/  one directory per installed update, never changed once switched to
 *
 * The switch is one atomic rename of a symlink, so the previous release stays whole and
 * switching back is the same rename.
 */
export const FACTORY = 'factory';
export const CURRENT = 'current';

/** The release directory the control plane runs from: current, else the installed tree. */
export async function activeRelease(releasesDir: string): Promise<string> {
  for (const link of [CURRENT, FACTORY]) {
    const target = await fs.realpath(path.join(releasesDir, link)).catch(() => undefined);
    if (target) return target;
  }
  throw new Error(`${releasesDir} has neither ${CURRENT} nor ${FACTORY}: is the appliance launcher running?`);
}

/** Points `<releases>/<name>` at `target`, atomically (a new link renamed over the old one). */
export async function pointLink(releasesDir: string, name: string, target: string): Promise<void> {
  const tmp = path.join(releasesDir, `.${name}-${process.pid}-${Date.now()}`);
  await fs.symlink(target, tmp);
  await fs.rename(tmp, path.join(releasesDir, name));
}

/** Makes the given release the one the control plane starts from next. */
export async function switchRelease(releasesDir: string, release: string): Promise<void> {
  await pointLink(releasesDir, CURRENT, release);
}

/** What a release says about itself: release.json (bundles), else the installed build's defaults. */
export function releaseInfo(root: string, fallbackVersion: string): { version: string; built: string } {
  try {
    const m = JSON.parse(readFileSync(path.join(root, 'release.json'), 'utf8')) as {
      version: string;
      built: string;
    };
    return { version: m.version, built: m.built };
  } catch {
    let built = '';
    try {
      built = statSync(path.join(root, 'apiserver', 'dist', 'server.js')).mtime.toISOString();
    } catch {
      // not built: the build time is unknown
    }
    return { version: fallbackVersion, built };
  }
}

/**
 * Unpacks a verified payload into a new release directory beside the others and links it to the
 * installed third-party modules (a control-plane release brings only the project's own
 * packages). Built under a temporary name and renamed last: a half-installed release never has
 * its final name.
 */
export async function installRelease(opts: {
  releasesDir: string;
  payloadFile: string;
  manifestBytes: Buffer;
  version: string;
  id: string;
}): Promise<string> {
  const { releasesDir } = opts;
  const final = path.join(releasesDir, `${opts.version}-${opts.id.slice(0, 8)}`);
  const staging = path.join(releasesDir, `.staging-${opts.id}`);
  await fs.rm(staging, { recursive: true, force: true });
  await fs.mkdir(staging, { recursive: true });
  try {
    await run('tar', ['-xzf', opts.payloadFile, '-C', staging, '--no-same-owner', '--no-same-permissions']);
    await fs.writeFile(path.join(staging, 'release.json'), opts.manifestBytes);
    const factory = await fs.realpath(path.join(releasesDir, FACTORY));
    await linkModules(staging, factory);
    await fs.rename(staging, final);
  } catch (err) {
    await fs.rm(staging, { recursive: true, force: true });
    throw err;
  }
  return final;
}

/**
 * node_modules of a release: @vtl/* point at the release's own packages; every other module (and
 * a workspace's own node_modules) at the installed tree's.
 */
async function linkModules(release: string, factory: string): Promise<void> {
  const modules = path.join(release, 'node_modules');
  await fs.mkdir(path.join(modules, '@vtl'), { recursive: true });
  const workspaces = (
    JSON.parse(await fs.readFile(path.join(release, 'package.json'), 'utf8')) as {
      workspaces: string[];
    }
  ).workspaces;
  for (const ws of workspaces) {
    const pkgFile = path.join(release, ws, 'package.json');
    const pkg = await fs.readFile(pkgFile, 'utf8').catch(() => undefined);
    if (!pkg) continue;
    const name = (JSON.parse(pkg) as { name: string }).name;
    if (name.startsWith('@vtl/')) await fs.symlink(path.join('..', '..', ws), path.join(modules, name));
    const own = path.join(factory, ws, 'node_modules');
    if (await exists(own)) await fs.symlink(own, path.join(release, ws, 'node_modules'));
  }
  for (const entry of await fs.readdir(path.join(factory, 'node_modules'))) {
    if (entry === '@vtl' || entry === '.bin' || entry.startsWith('.')) continue;
    await fs.symlink(path.join(factory, 'node_modules', entry), path.join(modules, entry));
  }
}

const exists = (p: string) =>
  fs.access(p).then(
    () => true,
    () => false,
  );

/** Free bytes of the file system holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const s = await fs.statfs(dir);
  return s.bavail * s.bsize;
}

/**
 * After a successful update only the running release and the one a rollback returns to are
 * needed: older release directories (and those of failed updates) are removed, and so are the
 * files of other updates under `updatesDir` (their snapshots can no longer be rolled back to).
 */
export async function pruneReleases(opts: {
  releasesDir: string;
  keep: string[];
  updatesDir: string;
  keepUpdate: string;
}): Promise<string[]> {
  const removed: string[] = [];
  const keep = new Set(await Promise.all(opts.keep.map((p) => fs.realpath(p).catch(() => p))));
  for (const entry of await fs.readdir(opts.releasesDir)) {
    if (!/^v\d+\.\d+\.\d+-/.test(entry) && !entry.startsWith('.staging-')) continue;
    const dir = path.join(opts.releasesDir, entry);
    if (keep.has(dir)) continue;
    await fs.rm(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  for (const entry of await fs.readdir(opts.updatesDir).catch(() => [] as string[])) {
    if (entry === opts.keepUpdate) continue;
    await fs.rm(path.join(opts.updatesDir, entry), { recursive: true, force: true });
    removed.push(path.join(opts.updatesDir, entry));
  }
  return removed;
}
