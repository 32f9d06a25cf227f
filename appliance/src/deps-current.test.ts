import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/deps-current.mjs');
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const LOCK = {
  name: 'vtl',
  lockfileVersion: 3,
  packages: {
    '': { name: 'vtl', workspaces: ['api'] },
    api: { name: '@vtl/api', version: '0.1.0' },
    'node_modules/@vtl/api': { resolved: 'api', link: true },
    'node_modules/zod': { version: '4.6.7' },
    'node_modules/@esbuild/darwin-arm64': { version: '0.27.0', optional: true },
  },
};

/** A project whose lock is `lock` and whose npm install record is `installed` (none: undefined). */
function project(lock: object, installed: object | undefined): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vtl-deps-'));
  dirs.push(dir);
  fs.mkdirSync(path.join(dir, 'node_modules'));
  if (installed)
    fs.writeFileSync(path.join(dir, 'node_modules/.package-lock.json'), JSON.stringify(installed));
  fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify(lock));
  return dir;
}

const check = (dir: string) => {
  const r = spawnSync(process.execPath, [SCRIPT, dir], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
};

const installedOf = (lock: typeof LOCK) => {
  const { '': _root, 'node_modules/@esbuild/darwin-arm64': _other, ...packages } = lock.packages;
  return { name: lock.name, lockfileVersion: 3, packages };
};

describe('whether npm start and npm test reinstall the npm dependencies', () => {
  it('does not when the lock pins what is installed, however new the lock file is', () => {
    const dir = project(LOCK, installedOf(LOCK));
    // A rebase rewrote the lock file after the install, with the same content.
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(dir, 'package-lock.json'), later, later);
    expect(check(dir)).toEqual({ status: 0, stderr: '' });
  });

  it('does when a package changed version, is missing, went away, or nothing was installed', () => {
    const bumped = structuredClone(LOCK);
    bumped.packages['node_modules/zod'].version = '4.7.0';
    expect(check(project(bumped, installedOf(LOCK)))).toEqual({
      status: 1,
      stderr: 'npm dependencies out of date: node_modules/zod is 4.6.7, the lock pins 4.7.0\n',
    });
    const added = structuredClone(LOCK) as typeof LOCK & { packages: Record<string, object> };
    added.packages['node_modules/yaml'] = { version: '2.8.0' };
    expect(check(project(added, installedOf(LOCK))).stderr).toMatch(/node_modules\/yaml is not installed/);
    const removed = installedOf(LOCK) as { packages: Record<string, object> };
    removed.packages['node_modules/left-pad'] = { version: '1.3.0' };
    expect(check(project(LOCK, removed)).stderr).toMatch(/left-pad is installed but no longer in the lock/);
    expect(check(project(LOCK, undefined)).status).toBe(1);
  });
});
