import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { KeyObject } from 'node:crypto';
import { fileSha256, writeBundle } from './bundle-file.js';
import { BundleManifest } from './manifest.js';
import { sha256Hex, signBundle } from './signing.js';

const run = promisify(execFile);

/** Workspaces a release never carries: tests and benchmarks run from a checkout. */
const NOT_SHIPPED = new Set(['e2e']);

/**
 * Builds and signs a release bundle from a built tree (`npm run build` done): the root
 * package.json and package-lock.json, and each workspace's package.json and dist/ (the console's
 * built assets included). Returns the manifest written.
 */
export async function buildBundle(opts: {
  from: string;
  out: string;
  key: KeyObject;
  version: string;
  components?: BundleManifest['components'];
  built?: Date;
}): Promise<BundleManifest> {
  const root = JSON.parse(await fs.readFile(path.join(opts.from, 'package.json'), 'utf8')) as {
    workspaces: string[];
  };
  const members = ['package.json', 'package-lock.json'];
  for (const ws of root.workspaces) {
    if (NOT_SHIPPED.has(ws)) continue;
    const dist = path.join(opts.from, ws, 'dist');
    if (!(await fs.stat(dist).catch(() => undefined))?.isDirectory())
      throw new Error(`${dist} is missing: run \`npm run build\` before bundling`);
    members.push(`${ws}/package.json`, `${ws}/dist`);
  }
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-bundle-'));
  try {
    const payload = path.join(work, 'payload.tar.gz');
    await run('tar', [
      '-czf',
      payload,
      '-C',
      opts.from,
      '--exclude=*.tsbuildinfo',
      '--exclude=*.test.js',
      '--exclude=*.test.d.ts',
      '--dereference', // a tree may link to another build's dist (tests do)
      '--owner=0',
      '--group=0',
      ...members,
    ]);
    const manifest = BundleManifest.parse({
      format: 1,
      version: opts.version,
      built: (opts.built ?? new Date()).toISOString(),
      components: opts.components ?? ['control-plane'],
      payload: {
        file: 'payload.tar.gz',
        sha256: await fileSha256(payload),
        size: (await fs.stat(payload)).size,
      },
      dependencies_sha256: await fileSha256(path.join(opts.from, 'package-lock.json')),
    });
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    const signature = signBundle(opts.key, sha256Hex(manifestBytes), manifest.payload.sha256);
    await writeBundle(opts.out, manifestBytes, Buffer.from(`${JSON.stringify(signature)}\n`), payload);
    return manifest;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}
