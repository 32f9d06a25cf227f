import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReplayContent } from './contenders.js';
import { command } from './processes.js';

/**
 * fio's buffer options for the pool benchmark: every buffer refilled with fresh bytes (no two
 * blocks alike, so nothing is shared by chance), each 64 KiB of it 40 % random and 60 % a
 * repeated fill, which zstd stores in about 40 % of the space (measured on this kernel with
 * btrfs's zstd:3: 2.5x). Fixed seed: fio makes the same bytes every time with the same block size.
 */
export const FIO_CONTENT_ARGS = [
  '--refill_buffers',
  '--buffer_compress_percentage=60',
  '--buffer_compress_chunk=65536',
  '--randrepeat=1',
  '--randseed=1931',
];

/**
 * The same content for fio and the emulator: fio itself writes `bytes` with each block size
 * into files in memory (/dev/shm), with the options above; the initiator replays them. fio
 * cannot read its buffers from a file (its `buffer_pattern` takes at most 512 bytes, repeated
 * in every block), and a compressibility setting alone (`buffer_compress_percentage` beside the
 * offsite generator's records) would give the filesystem other bytes to compress, at another
 * cost. So the generator is fio, and the emulator gets fio's bytes: btrfs compresses the very
 * same data behind both. The pool benchmark checks this once (contentMatches).
 */
export async function fioContent(
  bytes: number,
  blocks: number[],
): Promise<ReplayContent & { release(): Promise<void> }> {
  const dir = await mkdtemp(join('/dev/shm', 'vtl-bench-content-'));
  const file = (block: number) => join(dir, `content-${block}.bin`);
  try {
    for (const block of blocks) {
      await command('fio', [
        '--name=content',
        `--filename=${file(block)}`,
        '--rw=write',
        `--bs=${block}`,
        `--size=${bytes}`,
        '--fallocate=none',
        '--output-format=terse',
        ...FIO_CONTENT_ARGS,
      ]);
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { fioArgs: FIO_CONTENT_ARGS, file, release: () => rm(dir, { recursive: true, force: true }) };
}

/** Whether two files hold the same bytes (cmp): what fio wrote on the pool against the content file. */
export async function contentMatches(a: string, b: string): Promise<boolean> {
  return command('cmp', ['-s', a, b]).then(
    () => true,
    () => false,
  );
}
