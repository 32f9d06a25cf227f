import { createHash } from 'node:crypto';

/** Default tar bytes per chunk: large enough for few requests, small enough for bounded memory. */
export const DEFAULT_CHUNK_BYTES = 64 * 1024 * 1024;
export const MIN_CHUNK_BYTES = 64 * 1024;
/** Chunks go up in one PUT; a compressed chunk stays far below S3's 5 GiB single-PUT limit. */
export const MAX_CHUNK_BYTES = 1024 * 1024 * 1024;

/** How many chunks a tar stream of `size` bytes splits into. */
export function chunkCount(size: number, chunkBytes: number): number {
  return Math.max(1, Math.ceil(size / chunkBytes));
}

/** Tar bytes of chunk n. */
export function rawBytesOf(n: number, size: number, chunkBytes: number): number {
  return Math.min(chunkBytes, size - n * chunkBytes);
}

/** The manifest's chunks_sha256: SHA-256 over each chunk's sha256 hex plus '\n'. */
export function chunksSha256(hashes: readonly string[]): string {
  const h = createHash('sha256');
  for (const r of hashes) h.update(`${r}\n`);
  return h.digest('hex');
}

/** The largest value of `field` among chunks (a loop: a cartridge can have 100,000+ chunks). */
export function largest<K extends string>(chunks: readonly Record<K, number>[], field: K): number {
  let max = 0;
  for (const c of chunks) max = Math.max(max, c[field]);
  return max;
}
