import type { FileHandle } from 'node:fs/promises';
import { giveBlockBuffer, takeBlockBuffer } from './block-buffers.js';
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

/** Blocks read ahead at most; with several pool threads reading, the disk queue stays busy. */
const WINDOW_BLOCKS = 8;
/** Bytes read ahead at most (at least one block is always allowed). */
const WINDOW_BYTES = 8 * 1024 * 1024;

/**
 * Read-ahead over consecutive blocks, as a drive's buffer does: while the host takes block N,
 * the next few are already being read from the data file on pool threads, so a sequential
 * reader never waits for a read round trip and the disk sees several requests at once.
 * Anything but a sequential read drops it.
 */
export class ReadAhead {
  private readonly queue: Prefetch[] = [];
  private bytes = 0;

  constructor(private readonly source: BlockSource) {}

  /** The object the window would read next, when it holds any. */
  get nextObject(): number | undefined {
    const last = this.queue.at(-1);
    return last ? last.object + 1 : undefined;
  }

  /** Whether another block of this length fits the window. */
  wants(length: number): boolean {
    return (
      this.queue.length === 0 || (this.queue.length < WINDOW_BLOCKS && this.bytes + length <= WINDOW_BYTES)
    );
  }

  /** Starts reading a block that will probably be asked for after those already queued. */
  start(object: number, offset: number, length: number): void {
    const read = readBytes(this.source, offset, length);
    // A failure surfaces when the block is taken; a dropped prefetch's failure does not matter.
    read.catch(() => undefined);
    this.queue.push({ object, offset, length, read });
    this.bytes += length;
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
