import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle } from './bundle-build.js';
import { openBundle, writeBundle } from './bundle-file.js';
import { compareVersions } from './manifest.js';
import { UpdateRefusal, verifyBundleFile } from './preflight.js';
import { activeRelease, installRelease, pointLink, pruneReleases, switchRelease } from './releases.js';

/** A built tree of the project's shape: root package.json with workspaces, each with dist/. */
async function makeTree(dir: string, lock = '{"lockfileVersion":3}\n') {
  await fs.mkdir(path.join(dir, 'a', 'dist'), { recursive: true });
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ workspaces: ['a', 'e2e'] }));
  await fs.writeFile(path.join(dir, 'package-lock.json'), lock);
  await fs.writeFile(path.join(dir, 'a', 'package.json'), JSON.stringify({ name: '@vtl/a' }));
  await fs.writeFile(path.join(dir, 'a', 'dist', 'main.js'), 'export const answer = 42;\n');
  await fs.mkdir(path.join(dir, 'node_modules', 'left-pad'), { recursive: true });
}

describe('release bundles: signature and preflight before anything is applied', () => {
  let tmp: string;
  let tree: string;
  let releases: string;
  let keys: { privateKey: KeyObject; publicKey: KeyObject };
  let trusted: string;

  const verify = (file: string, opts: { force?: boolean; running?: string; keysFile?: string } = {}) =>
    fs.mkdtemp(path.join(tmp, 'work-')).then((workDir) =>
      verifyBundleFile({
        file,
        workDir,
        trustedKeysFile: opts.keysFile ?? trusted,
        runningVersion: opts.running ?? 'v0.1.0',
        force: opts.force ?? false,
        releasesDir: releases,
      }),
    );
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => 'accepted',
      (err: unknown) => (err instanceof UpdateRefusal ? err.reason : `unexpected: ${String(err)}`),
    );
  const bundle = async (
    name: string,
    version: string,
    extra: Partial<Parameters<typeof buildBundle>[0]> = {},
  ) => {
    const out = path.join(tmp, name);
    await buildBundle({ from: tree, out, key: keys.privateKey, version, ...extra });
    return out;
  };

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-updater-'));
    tree = path.join(tmp, 'tree');
    releases = path.join(tmp, 'releases');
    await makeTree(tree);
    await fs.mkdir(releases);
    await pointLink(releases, 'factory', tree);
    keys = generateKeyPairSync('ed25519');
    trusted = path.join(tmp, 'trusted.pem');
    await fs.writeFile(trusted, keys.publicKey.export({ type: 'spki', format: 'pem' }));
  });
  afterAll(() => fs.rm(tmp, { recursive: true, force: true }));

  it('accepts a bundle signed by a trusted key that moves forward, and installs it beside the installed tree', async () => {
    const file = await bundle('good.tar.gz', 'v0.2.0');
    const verified = await verify(file);
    expect(verified.manifest).toMatchObject({ version: 'v0.2.0', components: ['control-plane'] });
    const release = await installRelease({
      releasesDir: releases,
      payloadFile: verified.payloadFile,
      manifestBytes: verified.manifestBytes,
      version: 'v0.2.0',
      id: '0123456789abcdef',
    });
    expect(await fs.readFile(path.join(release, 'a', 'dist', 'main.js'), 'utf8')).toContain('42');
    // Its own package under @vtl, the installed tree's third-party modules, no test workspace.
    expect(await fs.realpath(path.join(release, 'node_modules', '@vtl', 'a'))).toBe(path.join(release, 'a'));
    expect(await fs.realpath(path.join(release, 'node_modules', 'left-pad'))).toBe(
      path.join(tree, 'node_modules', 'left-pad'),
    );
    expect(JSON.parse(await fs.readFile(path.join(release, 'release.json'), 'utf8')).version).toBe('v0.2.0');
    expect(await activeRelease(releases)).toBe(await fs.realpath(tree));
    await switchRelease(releases, release);
    expect(await activeRelease(releases)).toBe(release);
    await switchRelease(releases, tree);
    expect(await activeRelease(releases)).toBe(await fs.realpath(tree));
  });

  it('keeps only the running and the previous release after an update', async () => {
    const updates = path.join(tmp, 'updates');
    for (const d of ['v0.0.5-aaaaaaaa', 'v0.0.6-bbbbbbbb', 'v0.0.7-cccccccc'])
      await fs.mkdir(path.join(releases, d), { recursive: true });
    for (const d of ['old-update', 'this-update']) await fs.mkdir(path.join(updates, d), { recursive: true });
    await pruneReleases({
      releasesDir: releases,
      keep: [path.join(releases, 'v0.0.7-cccccccc'), path.join(releases, 'v0.0.6-bbbbbbbb')],
      updatesDir: updates,
      keepUpdate: 'this-update',
    });
    const left = (await fs.readdir(releases)).filter((e) => e.startsWith('v0.0.'));
    expect(left.sort()).toEqual(['v0.0.6-bbbbbbbb', 'v0.0.7-cccccccc']);
    expect(await fs.readdir(updates)).toEqual(['this-update']);
    expect(await fs.readlink(path.join(releases, 'factory'))).toBe(tree);
  });

  it('refuses a payload altered after signing', async () => {
    const file = await bundle('tampered.tar.gz', 'v0.2.0');
    const parts = await openBundle(file, await fs.mkdtemp(path.join(tmp, 'open-')));
    await fs.appendFile(parts.payloadFile, 'extra bytes');
    const out = path.join(tmp, 'tampered-2.tar.gz');
    await writeBundle(out, parts.manifestBytes, parts.signatureBytes, parts.payloadFile);
    expect(await refusal(verify(out))).toBe('signature');
  });

  it('refuses a manifest altered after signing (a version bumped by hand)', async () => {
    const file = await bundle('edited.tar.gz', 'v0.2.0');
    const parts = await openBundle(file, await fs.mkdtemp(path.join(tmp, 'open-')));
    const edited = Buffer.from(parts.manifestBytes.toString().replace('v0.2.0', 'v9.0.0'));
    const out = path.join(tmp, 'edited-2.tar.gz');
    await writeBundle(out, edited, parts.signatureBytes, parts.payloadFile);
    expect(await refusal(verify(out))).toBe('signature');
  });

  it('refuses a bundle signed with a key that is not trusted, and everything when no key is trusted', async () => {
    const other = generateKeyPairSync('ed25519');
    const out = path.join(tmp, 'other-key.tar.gz');
    await buildBundle({ from: tree, out, key: other.privateKey, version: 'v0.2.0' });
    expect(await refusal(verify(out))).toBe('signature');
    expect(await refusal(verify(out, { keysFile: path.join(tmp, 'no-such.pem') }))).toBe('untrusted');
  });

  it('refuses an older or equal version unless forced', async () => {
    const file = await bundle('old.tar.gz', 'v0.1.0');
    expect(await refusal(verify(file, { running: 'v0.2.0' }))).toBe('version');
    expect(await refusal(verify(file, { running: 'v0.1.0' }))).toBe('version');
    expect(await refusal(verify(file, { running: 'v0.2.0', force: true }))).toBe('accepted');
  });

  it('refuses a release that also replaces the data plane, saying to run the installer', async () => {
    const file = await bundle('dataplane.tar.gz', 'v0.3.0', { components: ['control-plane', 'data-plane'] });
    const err = await verify(file).catch((e: UpdateRefusal) => e);
    expect(err).toBeInstanceOf(UpdateRefusal);
    expect((err as UpdateRefusal).reason).toBe('data_plane');
    expect((err as UpdateRefusal).message).toMatch(/installer in a maintenance window/);
  });

  it('refuses a release built against other third-party modules', async () => {
    const other = path.join(tmp, 'tree-other-lock');
    await makeTree(other, '{"lockfileVersion":3,"other":true}\n');
    const out = path.join(tmp, 'other-lock.tar.gz');
    await buildBundle({ from: other, out, key: keys.privateKey, version: 'v0.2.0' });
    expect(await refusal(verify(out))).toBe('dependencies');
  });

  it('refuses what is not a bundle', async () => {
    const junk = path.join(tmp, 'junk.tar.gz');
    await fs.writeFile(junk, 'not gzip at all');
    expect(await refusal(verify(junk))).toBe('format');
  });

  it('orders versions numerically', () => {
    expect(compareVersions('v0.10.0', 'v0.9.9')).toBeGreaterThan(0);
    expect(compareVersions('v1.0.0', 'v1.0.0')).toBe(0);
    expect(compareVersions('v1.2.3', 'v1.3.0')).toBeLessThan(0);
  });
});
