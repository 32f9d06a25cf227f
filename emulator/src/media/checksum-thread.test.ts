import { describe, expect, it } from 'vitest';
import { giveAlignedBuffer, takeAlignedBuffer } from './aligned-buffers.js';
import { type ChecksumAlgorithm, blockChecksum } from './checksum.js';
import { blockChecksums } from './checksum-thread.js';

/** Blocks of different lengths back to back, each byte pseudo-random. */
function blocksInto(buf: Buffer, lengths: number[]): void {
  let x = 12345;
  for (let i = 0; i < lengths.reduce((a, b) => a + b, 0); i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    buf[i] = x >>> 24;
  }
}

function expected(algorithm: ChecksumAlgorithm, buf: Buffer, lengths: number[]): number[] {
  let at = 0;
  return lengths.map((n) => blockChecksum(algorithm)(buf.subarray((at += n) - n, at)));
}

describe('block checksums off the event loop', () => {
  // Large enough in all to go to the helper thread, with odd lengths and offsets inside.
  const lengths = [4096, 1, 1024 * 1024, 100_000, 65_536];
  const total = lengths.reduce((a, b) => a + b, 0);

  for (const algorithm of ['crc32c', 'crc32', 'xxh3'] as const) {
    it(`computes ${algorithm} of blocks in an aligned slot in place, as the event loop would`, async () => {
      const slot = takeAlignedBuffer(total)!;
      expect(slot.buffer).toBeInstanceOf(SharedArrayBuffer);
      blocksInto(slot, lengths);
      // A view that starts inside the slot, as a run's later blocks do.
      const view = slot.subarray(4097);
      const tail = lengths.slice(2);
      const [inSlot, inView] = await Promise.all([
        blockChecksums(algorithm, slot, lengths),
        blockChecksums(algorithm, view, tail),
      ]);
      expect(inSlot).toEqual(expected(algorithm, slot, lengths));
      expect(inView).toEqual(expected(algorithm, view, tail));
      // Different data, different sums: the helper read the bytes, not a stale copy.
      view[1000] = view[1000]! ^ 0xff;
      const again = await blockChecksums(algorithm, view, tail);
      expect(again[0]).not.toBe(inView[0]);
      expect(again.slice(1)).toEqual(inView.slice(1));
      giveAlignedBuffer(slot);
    });
  }

  it('computes the sums of ordinary buffers here', async () => {
    const buf = Buffer.alloc(total);
    blocksInto(buf, lengths);
    expect(await blockChecksums('crc32c', buf, lengths)).toEqual(expected('crc32c', buf, lengths));
  });
});
