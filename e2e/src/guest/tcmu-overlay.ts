import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { cpioArchive, type CpioFile } from './cpio.js';
import type { GuestImage } from './guest-image.js';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../../..');

async function tree(root: string, rel = ''): Promise<CpioFile[]> {
  const out: CpioFile[] = [];
  for (const e of await fs.readdir(path.join(root, rel), { withFileTypes: true })) {
    const name = path.join(rel, e.name);
    if (e.isDirectory()) out.push({ name, data: '', dir: true }, ...(await tree(root, name)));
    else if (name !== 'ready') {
      const mode = (await fs.stat(path.join(root, name))).mode & 0o777;
      out.push({ name, data: await fs.readFile(path.join(root, name)), mode });
    }
  }
  return out;
}

/**
 * The Linux target core for the guest (scripts/build-tcmu-overlay.sh: LIO, TCMU, tcm_loop and
 * LIO iSCSI modules of the guest's own kernel package, and the TCMU handler front end built
 * from source) as a cpio archive to append to its initramfs. Built once, then cached.
 */
export async function tcmuOverlay(image: GuestImage): Promise<Buffer> {
  const script = path.join(repoRoot, 'scripts/build-tcmu-overlay.sh');
  let stdout: string;
  try {
    ({ stdout } = await run('bash', [script, image.dir], { maxBuffer: 16 << 20, timeout: 10 * 60_000 }));
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(
      `building the TCMU overlay failed (run bash ${script} ${image.dir}): ${e.stderr ?? e.message}`,
    );
  }
  const dir = stdout.trim().split('\n').pop()!;
  return cpioArchive(await tree(dir));
}
