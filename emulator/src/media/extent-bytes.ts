import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { onBtrfs } from './write-cells.js';

const exec = promisify(execFile);

/** Last answer per image directory, kept while its files' sizes and times stay the same. */
const kept = new Map<string, { signature: string; bytes: number }>();
/** Directories where compsize cannot run (not root, not installed): st_blocks from then on. */
let compsizeMissing = false;

/**
 * Bytes an image's files hold on disk after compression (spec §2.7 `phys_bytes`). On btrfs,
 * st_blocks counts extents before compression, so compsize (Debian btrfs-compsize) reads the
 * extents themselves; each extent counts once per image, so blocks a dedup pass shares with
 * other cartridges still count here (the saving shows at pool level). Anywhere else, and when
 * compsize cannot run, `blocks` (the sum of st_blocks × 512) is the answer. `signature` changes
 * whenever a file does, so an idle image's figure is read once.
 */
export async function storedBytes(
  dir: string,
  files: string[],
  blocks: number,
  signature: string,
): Promise<number> {
  if (compsizeMissing || files.length === 0) return blocks;
  const last = kept.get(dir);
  if (last?.signature === signature) return last.bytes;
  if (!(await onBtrfs(dir))) return blocks;
  let bytes = blocks;
  try {
    const { stdout } = await exec('compsize', ['-b', ...files], { timeout: 60_000 });
    const disk = /^TOTAL\s+\d+%\s+(\d+)/m.exec(stdout)?.[1];
    if (disk !== undefined) bytes = Number(disk);
  } catch (err) {
    const e = err as { code?: string | number; stderr?: string };
    if (e.code === 'ENOENT' || /permission|not permitted/i.test(e.stderr ?? '')) compsizeMissing = true;
    // "No files." (only holes and inline data so far): st_blocks says as much.
  }
  if (kept.size > 50_000) kept.clear();
  kept.set(dir, { signature, bytes });
  return bytes;
}
