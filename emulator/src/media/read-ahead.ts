import type { FileHandle } from 'node:fs/promises';
import { DIRECT_IO_ALIGN, shareAlignedBuffer } from './aligned-buffers.js';
import { giveBlockBuffer, takeBlockBuffer } from './block-buffers.js';
import type { ChecksumAlgorithm } from './checksum.js';
import { blockChecksums } from './checksum-thread.js';
import type { DirectReader, ReadBytes } from './direct-read.js';

export type { ReadBytes } from './direct-read.js';

/** A data file to read blocks from: around the page cache where it can, else through it. */
export interface BlockSource {
  data: FileHandle;
  direct: DirectReader;
}

/** Reads n bytes at an offset into a block buffer from a pool. */
export async function readBytes(source: BlockSource, offset: number, n: number): Promise<ReadBytes> {
  const direct = await source.direct.read(offset, n);
  if (direct) return direct;
  // Fully overwritten or rejected by the caller (short read), so recycled contents never leak.
  const buf = takeBlockBuffer(n);
  const { bytesRead } = await source.data.read(buf, 0, n, offset);
  return { buf, bytesRead };
}

interface Prefetch {
  object: number;
  offset: number;
  length: number;
  read: Promise<ReadBytes>;
}

/**
 * Bytes one read of consecutive blocks takes at most (its aligned slot then stays within a
 * 4 MiB size class). Every read is a request to the disk, and on a VM each one costs an exit
 * to the hypervisor: reading small blocks one by one cost more than the bytes did.
 */
const RUN_BYTES = 4 * 1024 * 1024 - 2 * DIRECT_IO_ALIGN;
/** Blocks one run holds at most; small blocks fill a run by count before they fill it by bytes. */
const RUN_BLOCKS = 64;
/**
 * What is read ahead at most (at least one block is always allowed): four runs, so the disk
 * has requests queued while the host takes the blocks of another.
 */
const WINDOW_BYTES = 4 * (RUN_BYTES + 2 * DIRECT_IO_ALIGN);
const WINDOW_BLOCKS = 4 * RUN_BLOCKS;

/** A block to read ahead: its object number and where its bytes are. */
export interface BlockExtent {
  object: number;
  offset: number;
  length: number;
}

/**
 * Whether `next` can be read in one read with `prev`: it starts where `prev` ends, or less than
 * DIRECT_IO_ALIGN after (the zeros after a padded block, index-file.ts padsBlock, or the gap
 * before an aligned one). Reading those few bytes along costs far less than a request more.
 */
export function continuesRun(prev: BlockExtent, next: BlockExtent): boolean {
  const gap = next.offset - (prev.offset + prev.length);
  return gap >= 0 && gap < DIRECT_IO_ALIGN;
}

/**
 * Read-ahead over consecutive blocks, as a drive's buffer does: while the host takes block N,
 * the next few are already being read from the data file on pool threads, so a sequential
 * reader never waits for a read round trip and the disk sees several requests at once.
 * Anything but a sequential read drops it.
 */
export class ReadAhead {
  private readonly queue: Prefetch[] = [];
  private bytes = 0;

  /** `checksum`: the blocks' checksum algorithm; each block comes with its checksum computed. */
  constructor(
    private readonly source: BlockSource,
    private readonly checksum: ChecksumAlgorithm,
  ) {}

  /** The object the window would read next, when it holds any. */
  get nextObject(): number | undefined {
    const last = this.queue.at(-1);
    return last ? last.object + 1 : undefined;
  }

  /**
   * Whether a run of `blocks` blocks spanning `bytes` of the file (gaps included) is within a
   * run's bounds and fits the window (a single block always fits an empty one, however large).
   */
  wants(bytes: number, blocks: number): boolean {
    if (this.queue.length === 0 && blocks === 1) return true;
    if (blocks > RUN_BLOCKS || (blocks > 1 && bytes > RUN_BYTES)) return false;
    return this.queue.length + blocks <= WINDOW_BLOCKS && this.bytes + bytes <= WINDOW_BYTES;
  }

  /**
   * Whether the window has room for a whole run: topping it up a block at a time would read
   * block by block again.
   */
  get roomForRun(): boolean {
    if (this.queue.length === 0) return true;
    return WINDOW_BYTES - this.bytes >= RUN_BYTES && WINDOW_BLOCKS - this.queue.length >= RUN_BLOCKS;
  }

  /**
   * Starts reading blocks that will probably be asked for after those already queued, in one
   * read when they lie back to back in the file or a gap under 4 KiB apart (continuesRun: the
   * cartridge gathers such runs). Each block is then a view into the run's buffer, given back on
   * its own.
   */
  start(blocks: BlockExtent[]): void {
    const first = blocks[0];
    if (!first) return;
    const last = blocks.at(-1)!;
    const together =
      blocks.length > 1
        ? this.source.direct.read(first.offset, last.offset + last.length - first.offset)
        : Promise.resolve(undefined);
    const views = together.then((run) => run && this.split(run, blocks));
    blocks.forEach((b, i) => {
      // Without a direct read of the run, each block is read on its own.
      const read = views.then((v) => v?.[i] ?? this.readOne(b));
      // A failure surfaces when the block is taken; a dropped prefetch's failure does not matter.
      read.catch(() => undefined);
      this.queue.push({ ...b, read });
      this.bytes += b.length;
    });
  }

  /** The run's blocks as views into its buffer, each holding a share of the slot. */
  private split(run: ReadBytes, blocks: BlockExtent[]): Promise<ReadBytes[]> {
    const first = blocks[0]!;
    for (let i = 1; i < blocks.length; i++) shareAlignedBuffer(run.buf);
    const starts = blocks.map((b) => b.offset - first.offset);
    const views = blocks.map((b, i): ReadBytes => {
      const at = starts[i]!;
      return {
        buf: run.buf.subarray(at, at + b.length),
        bytesRead: Math.max(0, Math.min(b.length, run.bytesRead - at)),
      };
    });
    return this.withChecksums(run, views, starts);
  }

  private async readOne(b: BlockExtent): Promise<ReadBytes> {
    const read = await readBytes(this.source, b.offset, b.length);
    return (await this.withChecksums(read, [read], [0]))[0]!;
  }

  /**
   * The views (at `starts` in the whole read) with their checksums, computed off the event
   * loop (checksum-thread.ts) while earlier blocks go to the host. The helper sums stretches
   * that follow one another, so a gap between blocks is a stretch of its own, whose sum is
   * dropped. A short read keeps none: the block is refused anyway.
   */
  private async withChecksums(whole: ReadBytes, views: ReadBytes[], starts: number[]): Promise<ReadBytes[]> {
    if (whole.bytesRead !== whole.buf.length) return views;
    const lengths: number[] = [];
    const sumOf: number[] = [];
    let at = 0;
    views.forEach((v, i) => {
      const gap = starts[i]! - at;
      if (gap > 0) lengths.push(gap);
      sumOf.push(lengths.length);
      lengths.push(v.buf.length);
      at = starts[i]! + v.buf.length;
    });
    const sums = await blockChecksums(this.checksum, whole.buf, lengths);
    return views.map((v, i) => ({ ...v, checksum: sums[sumOf[i]!] }));
  }

  /** The prefetched bytes when they are this block's, else undefined (and the window is dropped). */
  take(object: number, offset: number, length: number): Promise<ReadBytes> | undefined {
    const p = this.queue[0];
    if (p && p.object === object && p.offset === offset && p.length === length) {
      this.queue.shift();
      this.bytes -= p.length;
      return p.read;
    }
    void this.drop();
    return undefined;
  }

  /** Forgets the window; resolves when its reads have ended (before the file may be closed). */
  async drop(): Promise<void> {
    const dropped = this.queue.splice(0);
    this.bytes = 0;
    for (const p of dropped) {
      const done = await p.read.catch(() => undefined);
      if (done) giveBlockBuffer(done.buf);
    }
  }
}
