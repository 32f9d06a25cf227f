import { crc32 } from '@node-rs/crc32';
import { crc32c } from '../util/crc32c.js';

/** The checksum an index keeps of each block's bytes. */
export type BlockChecksum = (data: Buffer) => number;

/** The checksum algorithms an index may carry (checksum-thread.ts computes the same ones). */
export type ChecksumAlgorithm = 'crc32' | 'crc32c';

/**
 * The block checksum of an index format version: version 1 images (the first releases) carry
 * CRC-32, versions 2 and 3 CRC-32C, version 4 CRC-32 again. The checksum runs over every byte a
 * host writes and reads, and was a fifth of the emulator's CPU time per streamed GiB with
 * CRC-32C: @node-rs/crc32 folds CRC-32 with carry-less multiplies at about 9 GiB/s here, but
 * its CRC-32C calls out of line for every 8 bytes, 4 GiB/s (docs/performance.md).
 */
export function checksumAlgorithm(indexVersion: number): ChecksumAlgorithm {
  return indexVersion === 2 || indexVersion === 3 ? 'crc32c' : 'crc32';
}

/** CRC-32 (ISO-HDLC, zlib's), the same value as zlib.crc32 at twice its speed. */
export function fastCrc32(data: Buffer): number {
  return crc32(data) >>> 0;
}

export function blockChecksum(algorithm: ChecksumAlgorithm): BlockChecksum {
  return algorithm === 'crc32' ? fastCrc32 : (data) => crc32c(data);
}
