import type { FileHandle } from 'node:fs/promises';
import { giveBlockBuffer, takeBlockBuffer } from './block-buffers.js';

/** Bytes read from the data file; fewer than asked means the file is shorter than the index says. */
export interface ReadBytes {
  buf: Buffer;
  bytesRead: number;
}

/** Reads n bytes at an offset into a block buffer from the pool. */
export async function readBytes(data: FileHandle, offset: number, n: number): Promise<ReadBytes> {
  // Fully overwritten or rejected by the caller (short read), so recycled contents never leak.
  const buf = takeBlockBuffer(n);
  const { bytesRead } = await data.read(buf, 0, n, offset);
  return { buf, bytesRead };
}

interface Prefetch {
  object: number;
  offset: number;
  length: number;
  read: Promise<ReadBytes>;
}

/**
 * One block of read-ahead, as a drive's buffer does: while the host takes block N, block N+1
 * is already being read from the data file, so a sequential reader never waits for a pool
 * thread's round trip. Anything but a sequential read drops it.
 */
export class ReadAhead {
  private next: Prefetch | undefined;

  constructor(private readonly data: FileHandle) {}

  /** Starts reading a block that will probably be asked for next. */
  start(object: number, offset: number, length: number): void {
    this.drop();
    const read = readBytes(this.data, offset, length);
    // A failure surfaces when the block is taken; a dropped prefetch's failure does not matter.
    read.catch(() => undefined);
    this.next = { object, offset, length, read };
  }

  /** The prefetched bytes when they are this block's, else undefined (and the prefetch is dropped). */
  take(object: number, offset: number, length: number): Promise<ReadBytes> | undefined {
    const p = this.next;
    if (p && p.object === object && p.offset === offset && p.length === length) {
      this.next = undefined;
      return p.read;
    }
    this.drop();
    return undefined;
  }

  /** Forgets the prefetch; resolves when its read has ended (before the file may be closed). */
  async drop(): Promise<void> {
    const p = this.next;
    if (!p) return;
    this.next = undefined;
    const done = await p.read.catch(() => undefined);
    if (done) giveBlockBuffer(done.buf);
  }
}
