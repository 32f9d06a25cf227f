import { describe, expect, it } from 'vitest';
import { blockChecksum, checksumAlgorithm, xxh3Low32 } from './checksum.js';

/** `length` pseudo-random bytes (a fixed LCG, so the reference values below stay valid). */
function pseudoRandom(length: number): Buffer {
  const b = Buffer.alloc(length);
  let x = 12345;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

describe('block checksums', () => {
  // XXH3-64 (seed 0) of the same bytes by the reference implementation's CLI, `xxhsum -H3` 0.8.1.
  it.each([
    ['no bytes', Buffer.alloc(0), 0x2d06800538d394c2n],
    ['one byte', Buffer.from('a'), 0xe6c632b61e964e1fn],
    ['a sentence', Buffer.from('The quick brown fox jumps over the lazy dog'), 0xce7d19a5418fb365n],
    ['1 MiB and 13 bytes', pseudoRandom(1048576 + 13), 0xfb8bfb3fda4a1b0en],
  ])('version 5 keeps the low 32 bits of XXH3-64 of %s', (_, bytes, xxh3) => {
    expect(xxh3Low32(bytes)).toBe(Number(xxh3 & 0xffffffffn));
  });

  it('names each index version its checksum', () => {
    expect([1, 2, 3, 4, 5].map(checksumAlgorithm)).toEqual(['crc32', 'crc32c', 'crc32c', 'crc32', 'xxh3']);
    // CRC-32 and CRC-32C check values ("123456789"), as zlib and iSCSI define them.
    const check = Buffer.from('123456789');
    expect(blockChecksum('crc32')(check)).toBe(0xcbf43926);
    expect(blockChecksum('crc32c')(check)).toBe(0xe3069283);
  });
});
