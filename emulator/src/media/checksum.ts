import { createRequire } from 'node:module';
import { crc32 } from '@node-rs/crc32';
import { crc32c } from '../util/crc32c.js';

/** The checksum an index keeps of each block's bytes. */
export type BlockChecksum = (data: Buffer) => number;

/** The checksum algorithms an index may carry (checksum-thread.ts computes the same ones). */
export type ChecksumAlgorithm = 'crc32' | 'crc32c' | 'xxh3';

/**
 * The block checksum of an index format version: version 1 images (the first releases) carry
 * CRC-32, versions 2 and 3 CRC-32C, version 4 CRC-32 again, versions 5 and 6 XXH3. The checksum runs
 * over every byte a host writes and reads. With CRC-32C it was a fifth of the emulator's CPU
 * time per streamed GiB (@node-rs/crc32 calls out of line for every 8 bytes, 4 GiB/s on the
 * 2-core VM); CRC-32 folded with carry-less multiplies halved that (15 GiB/s); XXH3 runs at
 * about 70 GiB/s on the same core, so a 1 MiB block costs the event loop 15 microseconds
 * (docs/performance.md).
 */
export function checksumAlgorithm(indexVersion: number): ChecksumAlgorithm {
  if (indexVersion === 2 || indexVersion === 3) return 'crc32c';
  return indexVersion >= 5 ? 'xxh3' : 'crc32';
}

/** CRC-32 (ISO-HDLC, zlib's), the same value as zlib.crc32 at four times its speed. */
export function fastCrc32(data: Buffer): number {
  return crc32(data) >>> 0;
}

/**
 * xxhash-addon: the reference xxHash C library (its x86 dispatcher picks SSE2, AVX2 or AVX-512
 * at run time), prebuilt for Linux, Node-API. Loaded with require, as it is a CommonJS addon.
 */
const { XXHash3 } = createRequire(import.meta.url)('xxhash-addon') as {
  XXHash3: { hash(data: Buffer): Buffer };
};

/**
 * The low 32 bits of XXH3-64 with seed 0 (the digest's canonical form is big-endian). Unlike a
 * CRC it makes no promise for short bursts of flipped bits, but any damage to a block goes
 * unnoticed with a 2^-32 chance, what the index's 32-bit field allows any checksum, at a fifth of
 * CRC-32's cost.
 */
export function xxh3Low32(data: Buffer): number {
  return XXHash3.hash(data).readUInt32BE(4);
}

export function blockChecksum(algorithm: ChecksumAlgorithm): BlockChecksum {
  if (algorithm === 'xxh3') return xxh3Low32;
  return algorithm === 'crc32' ? fastCrc32 : (data) => crc32c(data);
}
