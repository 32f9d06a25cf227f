import type { FileHandle } from 'node:fs/promises';
import { DirectWriter, writeAll } from './direct-write.js';

/** The most one coalesced write carries. */
const MAX_RUN_BYTES = 16 * 1024 * 1024;

interface Run {
  offset: number;
  end: number;
  blocks: Buffer[];
  written: Promise<void>;
  settle: (err?: unknown) => void;
}

/**
 * Writes tape blocks into the data file, one write at a time and coalesced: while a write is
 * in flight, the blocks that follow it gather into one run that goes out as a single pwritev
 * when it ends. Runs grow with the disk's latency, so the disk gets large sequential writes,
 * and there is never more than one writer on the file (concurrent extending writes only queue
 * on the inode lock). Runs go around the page cache when they can (DirectWriter).
 */
export class BlockWriter {
  private readonly queue: Run[] = [];
  private writing = false;

  constructor(
    private readonly data: FileHandle,
    private readonly direct: DirectWriter,
    /** Told of bytes that went through the page cache (they need write-back). */
    private readonly onBuffered: (bytes: number) => void,
  ) {}

  /** Writes `block` at `offset`; resolves once it is in the file. */
  write(block: Buffer, offset: number): Promise<void> {
    // The last run, unless it is the one in flight, takes the block when it continues it.
    const last = this.queue.at(-1);
    const open = last && !(this.writing && last === this.queue[0]) ? last : undefined;
    if (open && open.end === offset && open.end - open.offset + block.length <= MAX_RUN_BYTES) {
      open.blocks.push(block);
      open.end += block.length;
      return open.written;
    }
    let settle!: (err?: unknown) => void;
    const written = new Promise<void>((resolve, reject) => {
      settle = (err) => (err === undefined ? resolve() : reject(err));
    });
    this.queue.push({ offset, end: offset + block.length, blocks: [block], written, settle });
    if (!this.writing) void this.drain();
    return written;
  }

  private async drain(): Promise<void> {
    this.writing = true;
    for (let run = this.queue[0]; run; run = this.queue[0]) {
      try {
        if (!(await this.direct.write(run.blocks, run.offset))) {
          await writeAll(this.data, run.blocks, run.offset);
          this.onBuffered(run.end - run.offset);
        }
        run.settle();
      } catch (err) {
        run.settle(err);
      }
      this.queue.shift();
    }
    this.writing = false;
  }

  close(): Promise<void> {
    return this.direct.close();
  }
}
