import type { FileHandle } from 'node:fs/promises';
import { DirectWriter, writeAll } from './direct-write.js';

/** The most one coalesced write carries. */
const MAX_RUN_BYTES = 16 * 1024 * 1024;
/**
 * Writes on their way to the file at once. With one, the disk idled between the end of a
 * write and the start of the next (the completion crosses to the event loop, which must get
 * the CPU back from the host's traffic first): a single stream reached a third of what the
 * disk takes at depth 1. With two, the next run is already queued in the kernel when one
 * ends; overwrites in place (a tape rewritten from BOT) even run side by side.
 */
const MAX_IN_FLIGHT = 2;
/**
 * With write cells (btrfs), writes on their way at once. Each is a buffered write flushed at
 * once (the O_DIRECT fallback on a compressing file), whose page-cache copy runs in its libuv
 * thread and whose compression runs in btrfs's workers: with two, a 1 MiB stream at depth 1
 * reached 0.89-0.90 x fio writing the same bytes; with four, 0.99-1.01 x, at less CPU per GiB
 * (quiet machine, 2026-12-03, docs/performance.md). Directory pools keep MAX_IN_FLIGHT: their
 * O_DIRECT writes go to the disk as they are, and two already keep it busy.
 */
const MAX_IN_FLIGHT_CELLS = 4;
/**
 * With write cells (btrfs), how far down the waiting runs a write may start. A compressing
 * btrfs file turns each write into a buffered write flushed at once, and that flush takes
 * every dirty page contiguous with its range: had the next cell's write already copied part of
 * its pages, the first flush would take them too, and the extents would depend on timing (two
 * cartridges of one stream no longer identical, so a dedup pass shares less). So no run starts
 * while a run it touches is on its way: the writer skips to a later one, and the skipped run
 * starts once its neighbours are written.
 */
const CELL_LOOKAHEAD = 2 * MAX_IN_FLIGHT_CELLS;
const PAGE = 4096;

/** Whether two runs share a page or meet end to start. */
function touches(a: { offset: number; end: number }, b: { offset: number; end: number }): boolean {
  const lo = (n: number) => Math.floor(n / PAGE);
  const hi = (n: number) => Math.ceil(n / PAGE);
  return lo(a.offset) <= hi(b.end) && lo(b.offset) <= hi(a.end);
}

/**
 * A run joins another write already on its way only once it carries this much: smaller ones
 * wait and gather, since every write is a libuv round trip and a disk request (a 256 KiB
 * stream would otherwise go out a block at a time).
 */
const SECOND_WRITE_MIN = 1024 * 1024;

interface Run {
  offset: number;
  end: number;
  blocks: Buffer[];
  written: Promise<void>;
  settle: (err?: unknown) => void;
}

/**
 * Writes tape blocks into the data file, coalesced: while a write is on its way, the blocks
 * that follow gather into one run that goes out as a single pwritev when it ends, or as a
 * second write beside it once the run is SECOND_WRITE_MIN long. Runs grow with the disk's
 * latency, so the disk gets large sequential writes and a request queued behind the one it is
 * working on; on btrfs they stay inside fixed cells of the file (write-cells.ts) and two on
 * their way are never neighbours (CELL_LOOKAHEAD). Each run
 * settles on its own (the cartridge indexes blocks in tape order whatever order their writes
 * end in). Runs go around the page cache when they can (DirectWriter).
 */
export class BlockWriter {
  /** Runs not yet handed to a write, in file order; only the last one takes more blocks. */
  private readonly waiting: Run[] = [];
  private readonly inFlight = new Set<Run>();

  constructor(
    private readonly data: FileHandle,
    private readonly direct: DirectWriter,
    /** Told of bytes that went through the page cache (they need write-back). */
    private readonly onBuffered: (bytes: number) => void,
    /**
     * No write crosses a multiple of this many bytes (write-cells.ts): a block over such an
     * offset goes out in two parts. Undefined: runs are cut by size alone.
     */
    private readonly cellBytes?: number,
  ) {}

  /**
   * Writes `block` at `offset`; resolves once it is in the file. Writes reach the file in call
   * order where they overlap (a padded block's zeros, then a block written over them).
   */
  write(block: Buffer, offset: number): Promise<void> {
    const cell = this.cellBytes;
    const cellEnd = cell === undefined ? Infinity : (Math.floor(offset / cell) + 1) * cell;
    if (offset + block.length > cellEnd) {
      const head = cellEnd - offset;
      return Promise.all([
        this.write(block.subarray(0, head), offset),
        this.write(block.subarray(head), cellEnd),
      ]).then(() => undefined);
    }
    const open = this.waiting.at(-1);
    if (
      open &&
      open.end === offset &&
      open.end - open.offset + block.length <= MAX_RUN_BYTES &&
      (cell === undefined || Math.floor(open.offset / cell) === Math.floor(offset / cell))
    ) {
      open.blocks.push(block);
      open.end += block.length;
      this.startWrites();
      return open.written;
    }
    let settle!: (err?: unknown) => void;
    const written = new Promise<void>((resolve, reject) => {
      settle = (err) => (err === undefined ? resolve() : reject(err));
    });
    this.waiting.push({ offset, end: offset + block.length, blocks: [block], written, settle });
    this.startWrites();
    return written;
  }

  private startWrites(): void {
    const most = this.cellBytes === undefined ? MAX_IN_FLIGHT : MAX_IN_FLIGHT_CELLS;
    while (this.inFlight.size < most && this.waiting.length > 0) {
      const at = this.nextToStart();
      if (at < 0) return;
      const [run] = this.waiting.splice(at, 1) as [Run];
      this.inFlight.add(run);
      void this.writeRun(run).finally(() => {
        this.inFlight.delete(run);
        this.startWrites();
      });
    }
  }

  /** Index in `waiting` of the run to start now, or -1 for none. */
  private nextToStart(): number {
    const cells = this.cellBytes !== undefined;
    const look = cells ? Math.min(this.waiting.length, CELL_LOOKAHEAD) : 1;
    for (let i = 0; i < look; i++) {
      const next = this.waiting[i]!;
      const small = next.end - next.offset < SECOND_WRITE_MIN && !this.endsCell(next);
      // The last run keeps gathering while another write is on its way, until it is large
      // (or fills its cell: it cannot grow).
      if (this.inFlight.size > 0 && small && i === this.waiting.length - 1) continue;
      // A block after a padded one starts inside the padding's zeros (index-file.ts paddedEnd):
      // it waits until they are written, or they could land over it; likewise it never passes
      // a run it overlaps.
      if ([...this.inFlight].some((r) => r.offset < next.end && next.offset < r.end)) continue;
      if (this.waiting.slice(0, i).some((r) => r.offset < next.end && next.offset < r.end)) continue;
      // On btrfs no run starts beside one on its way, even sharing a page (see CELL_LOOKAHEAD).
      if (cells && [...this.inFlight].some((r) => touches(r, next))) continue;
      return i;
    }
    return -1;
  }

  private endsCell(run: Run): boolean {
    return this.cellBytes !== undefined && run.end % this.cellBytes === 0;
  }

  private async writeRun(run: Run): Promise<void> {
    try {
      if (!(await this.direct.write(run.blocks, run.offset))) {
        await writeAll(this.data, run.blocks, run.offset);
        this.onBuffered(run.end - run.offset);
      }
      run.settle();
    } catch (err) {
      run.settle(err);
    }
  }

  close(): Promise<void> {
    return this.direct.close();
  }
}
