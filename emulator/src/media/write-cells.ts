import { statfs } from 'node:fs/promises';

/** statfs f_type of btrfs. */
export const BTRFS_MAGIC = 0x9123683e;

/**
 * btrfs compresses a written range in chunks of 512 KiB counted from the range's start, and a
 * write to a compressing file (O_DIRECT falls back to a buffered write flushed at once) is one
 * range. Writes that never cross a multiple of this size make a data file's extents follow
 * from its bytes and their offsets alone, not from how the host's blocks happened to coalesce.
 */
export const BTRFS_WRITE_CELL = 512 * 1024;

/** Whether `path` is on btrfs (false when it cannot be told). */
export async function onBtrfs(path: string): Promise<boolean> {
  return statfs(path).then(
    (s) => s.type === BTRFS_MAGIC,
    () => false,
  );
}

/**
 * The file offsets no single write to an image in `dir` may cross (BlockWriter), or undefined
 * where extents do not depend on how writes are cut. On btrfs, two cartridges written with the
 * same stream then hold the same extents, which a dedup pass shares whole: with writes cut
 * wherever the stream's blocks coalesced, sharing part of an extent left the rest of it
 * allocated (docs/storage.md).
 */
export async function writeCellBytes(dir: string): Promise<number | undefined> {
  return (await onBtrfs(dir)) ? BTRFS_WRITE_CELL : undefined;
}
