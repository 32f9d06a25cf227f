import { crc32 } from 'node:zlib';
import { crc32c } from '../util/crc32c.js';

/** The checksum an index keeps of each block's bytes. */
export type BlockChecksum = (data: Buffer) => number;

/**
 * The block checksum of an index format version: version 1 images (the first releases) carry
 * zlib's CRC-32, version 2 CRC-32C, which the CPU computes in hardware at several times the
 * speed — it runs over every byte a host writes and reads.
 */
export function blockChecksum(indexVersion: number): BlockChecksum {
  return indexVersion === 1 ? (data) => crc32(data) : (data) => crc32c(data);
}
