import { createHash } from 'node:crypto';

/**
 * Content-defined chunking, FastCDC (Xia et al., USENIX ATC 2016): a gear hash rolled over the
 * bytes cuts a chunk where its masked bits are all zero, with normalized chunking (a harder
 * mask before the average size, an easier one after it) and no cut before `min` or after `max`.
 * Boundaries depend on the bytes around them only, so an insertion moves the cuts near it and
 * nowhere else: what a deduplicating store with variable-size chunks finds.
 *
 * Written here rather than taken from npm: it is a few dozen lines, the bench needs nothing but
 * the cut points, and a workspace dependency for a bench script was not worth it. The bench
 * prints the mean chunk size (near `avg` plus part of `min`) as a check.
 *
 * The gear hash is kept in 32 bits (JavaScript's integer arithmetic): each step shifts it left
 * one bit, so its top bits depend on the last 32 bytes, and the masks take their bits from the
 * top.
 */
export interface ChunkSizes {
  min: number;
  avg: number;
  max: number;
}

/** FastCDC's usual bounds around an 8 KiB average: 2 KiB to 64 KiB. */
export const CDC_8K: ChunkSizes = { min: 2 * 1024, avg: 8 * 1024, max: 64 * 1024 };

/** 256 fixed pseudo-random 32-bit values (xorshift32 from a fixed seed), one per byte value. */
const GEAR = (() => {
  const table = new Uint32Array(256);
  let s = 0x9e3779b9;
  for (let i = 0; i < 256; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    table[i] = s;
  }
  return table;
})();

/** A mask of `bits` one bits at the top of 32. */
const topBits = (bits: number) => (0xffffffff << (32 - bits)) >>> 0;

/**
 * Cut points of `data` (exclusive ends of each chunk), the last one data.length. Normalization
 * level 2: the mask before `avg` has two bits more than log2(avg), the one after two fewer.
 */
export function chunkEnds(data: Uint8Array, sizes: ChunkSizes = CDC_8K): number[] {
  const bits = Math.round(Math.log2(sizes.avg));
  const hard = topBits(bits + 2);
  const easy = topBits(bits - 2);
  const ends: number[] = [];
  let start = 0;
  while (start < data.length) {
    const rest = data.length - start;
    if (rest <= sizes.min) {
      ends.push(data.length);
      break;
    }
    const last = start + Math.min(rest, sizes.max);
    const normal = start + Math.min(rest, sizes.avg);
    let hash = 0;
    let i = start + sizes.min;
    let cut = last;
    for (; i < normal; i++) {
      hash = ((hash << 1) + GEAR[data[i]!]!) >>> 0;
      if ((hash & hard) === 0) {
        cut = i + 1;
        break;
      }
    }
    if (cut === last)
      for (; i < last; i++) {
        hash = ((hash << 1) + GEAR[data[i]!]!) >>> 0;
        if ((hash & easy) === 0) {
          cut = i + 1;
          break;
        }
      }
    ends.push(cut);
    start = cut;
  }
  return ends;
}

/** What chunk-level dedup finds over some byte streams taken together. */
export interface ChunkDedup {
  bytes: number;
  uniqueBytes: number;
  chunks: number;
  uniqueChunks: number;
}

/**
 * Counts unique chunks (by SHA-256) over every stream given, each stream chunked on its own:
 * `bytes / uniqueBytes` is the dedup ratio a store keeping each distinct chunk once reaches.
 * `chunker` cuts one stream (FastCDC, or fixed-size blocks for comparison).
 */
export function chunkDedup(streams: Uint8Array[], chunker: (data: Uint8Array) => number[]): ChunkDedup {
  const seen = new Set<string>();
  const out: ChunkDedup = { bytes: 0, uniqueBytes: 0, chunks: 0, uniqueChunks: 0 };
  for (const data of streams) {
    let start = 0;
    for (const end of chunker(data)) {
      const digest = createHash('sha256').update(data.subarray(start, end)).digest('base64');
      out.bytes += end - start;
      out.chunks++;
      if (!seen.has(digest)) {
        seen.add(digest);
        out.uniqueBytes += end - start;
        out.uniqueChunks++;
      }
      start = end;
    }
  }
  return out;
}

/** Fixed-size blocks: what a block-level engine sharing aligned `size`-byte blocks could at best find. */
export const fixedBlocks =
  (size: number) =>
  (data: Uint8Array): number[] => {
    const ends: number[] = [];
    for (let end = size; end < data.length; end += size) ends.push(end);
    ends.push(data.length);
    return ends;
  };
