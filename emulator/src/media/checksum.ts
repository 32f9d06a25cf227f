import { crc32 } from 'node:zlib';
import { crc32c } from '../util/crc32c.js';

/** The checksum an index keeps of each block's bytes. */
export type BlockChecksum = (data: Buffer) => number;

/** The checksum algorithms an index may carry (checksum-thread.ts computes the same ones). */
export type ChecksumAlgorithm = 'crc32' | 'crc32c';

/**
 * The block checksum of an index format version: version 1 images (the first releases) carry
 * zlib's CRC-32, version 2 CRC-32C, which the CPU computes in hardware at several times the
 * speed — it runs over every byte a host writes and reads.
 */
export function checksumAlgorithm(indexVersion: number): ChecksumAlgorithm {
  return indexVersion === 1 ? 'crc32' : 'crc32c';
}

export function blockChecksum(algorithm: ChecksumAlgorithm): BlockChecksum {
  return algorithm === 'crc32' ? (data) => crc32(data) >>> 0 : (data) => crc32c(data);
}
