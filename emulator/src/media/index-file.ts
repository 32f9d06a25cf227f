import { writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { type BlockChecksum, type ChecksumAlgorithm, blockChecksum, checksumAlgorithm } from './checksum.js';
import { DIRECT_IO_ALIGN } from './aligned-buffers.js';
import { MediaError } from './errors.js';
import { syncDeferred } from '../util/deferred-sync.js';

/*
 * The block index: a 32-byte header, then one fixed 24-byte entry per tape object (data block
 * or filemark), so object N is at a computed offset and nothing needs scanning.
 *
 * header: magic "VTLIDX01" | u32 version | u32 entry size | u64 synced objects | u64 reserved
 * entry:  u64 data offset | u32 length | u32 filemarks before | u32 checksum | u8 kind | u8 flags | 2 reserved
 *
 * flags bit 0: the block was written encrypted by the drive (block-crypto.ts); older emulators
 * wrote 0 there, so every older image reads as clear blocks.
 *
 * The version says which checksum the entries carry (checksum.ts): 1 CRC-32, 2 and 3 CRC-32C,
 * 4 CRC-32 (the faster of the two with the library at hand), 5 the low 32 bits of XXH3-64 (a
 * fifth of CRC-32's cost; 6 too); and where blocks sit in the data file (blockOffset): back to
 * back up to version 2; from version 3 a block of 64 KiB or more whose length is a multiple of
 * 4 KiB starts on a 4 KiB boundary even after an odd record, so it can be written around the
 * page cache; from version 6 every block of 32 KiB or more starts on a 4 KiB boundary, whatever
 * its length, and is written with zeros up to the next one (paddedEnd), so its extents on btrfs
 * follow from offsets. New indexes are version 6; older images keep their version and their
 * placement, so old cartridges and exports still open and extend as before.
 *
 * "synced objects" is how many leading entries (and their data) were fsynced at the last sync
 * point; recovery only has to verify the entries after it. All integers little-endian.
 */
export const HEADER_SIZE = 32;
export const ENTRY_SIZE = 24;
const MAGIC = Buffer.from('VTLIDX01', 'latin1');
/** The version new indexes are created with; every version in READABLE_VERSIONS opens. */
const VERSION = 6;
const READABLE_VERSIONS = new Set([1, 2, 3, 4, 5, 6]);
/** The first version whose large 4 KiB-multiple blocks are placed on DIRECT_IO_ALIGN boundaries. */
const ALIGNED_BLOCKS_FROM = 3;
/** The first version whose blocks of PADDED_BLOCK_MIN or more are all aligned and padded. */
const PADDED_BLOCKS_FROM = 6;
/**
 * Up to version 5, blocks this long or longer (and 4 KiB multiples) are aligned; shorter ones
 * stay back to back (the gap would cost more).
 */
const ALIGNED_BLOCK_MIN = 64 * 1024;
/**
 * From version 6, blocks this long or longer are aligned and padded whatever their length: the
 * padding (under 4 KiB, zeros) is at most 12 % of such a block, and compresses away.
 */
const PADDED_BLOCK_MIN = 32 * 1024;
const SYNCED_AT = 16;
const KIND_BLOCK = 1;
const KIND_FILEMARK = 2;
const FLAG_ENCRYPTED = 0x01;
/** Entries fetched per read: sequential reads and spacing then cost one syscall per 1024 objects. */
const WINDOW = 1024;

export type ObjectKind = 'block' | 'filemark';

export interface IndexEntry {
  kind: ObjectKind;
  /** Byte offset of the record in the data file; for a filemark, the data end at that point. */
  offset: number;
  length: number;
  /** Filemarks among the objects before this one (for position reports and filemark search). */
  filemarksBefore: number;
  crc: number;
  /** The stored bytes are an encrypted record (block-crypto.ts), not the host's block. */
  encrypted?: boolean;
}

export function encodeEntry(e: IndexEntry, buf = Buffer.alloc(ENTRY_SIZE), at = 0): Buffer {
  buf.writeBigUInt64LE(BigInt(e.offset), at);
  buf.writeUInt32LE(e.length, at + 8);
  buf.writeUInt32LE(e.filemarksBefore, at + 12);
  buf.writeUInt32LE(e.crc >>> 0, at + 16);
  buf.writeUInt8(e.kind === 'filemark' ? KIND_FILEMARK : KIND_BLOCK, at + 20);
  buf.writeUInt8(e.encrypted === true ? FLAG_ENCRYPTED : 0, at + 21);
  buf.fill(0, at + 22, at + ENTRY_SIZE);
  return buf;
}

/** Decodes one entry; undefined when the bytes are not a valid entry (a torn or zeroed tail). */
export function decodeEntry(buf: Buffer, at = 0): IndexEntry | undefined {
  const kindByte = buf.readUInt8(at + 20);
  if (kindByte !== KIND_BLOCK && kindByte !== KIND_FILEMARK) return undefined;
  return {
    kind: kindByte === KIND_FILEMARK ? 'filemark' : 'block',
    offset: Number(buf.readBigUInt64LE(at)),
    length: buf.readUInt32LE(at + 8),
    filemarksBefore: buf.readUInt32LE(at + 12),
    crc: buf.readUInt32LE(at + 16),
    ...((buf.readUInt8(at + 21) & FLAG_ENCRYPTED) !== 0 ? { encrypted: true } : {}),
  };
}

/** Offset in the data file just past this object. */
export function entryEnd(e: IndexEntry): number {
  return e.offset + e.length;
}

/**
 * How an index's version places blocks in the data file: `packed` back to back (versions 1 and
 * 2); `aligned` blocks of 64 KiB or more that are 4 KiB multiples on 4 KiB boundaries (3 to 5);
 * `padded` every block of 32 KiB or more on a 4 KiB boundary, written with zeros up to the next
 * one (6).
 */
export type BlockPlacement = 'packed' | 'aligned' | 'padded';

export function placementOf(version: number): BlockPlacement {
  if (version >= PADDED_BLOCKS_FROM) return 'padded';
  return version >= ALIGNED_BLOCKS_FROM ? 'aligned' : 'packed';
}

const alignUp = (n: number) => Math.ceil(n / DIRECT_IO_ALIGN) * DIRECT_IO_ALIGN;

/** Whether a block of `length` bytes starts on a DIRECT_IO_ALIGN boundary under `placement`. */
function alignsBlock(length: number, placement: BlockPlacement): boolean {
  if (placement === 'padded') return length >= PADDED_BLOCK_MIN;
  return placement === 'aligned' && length >= ALIGNED_BLOCK_MIN && length % DIRECT_IO_ALIGN === 0;
}

/**
 * Where a block of `length` bytes goes when the previous record ends at `end`: at `end`, or at
 * the next DIRECT_IO_ALIGN boundary when the placement aligns it (at most 4 KiB - 1 of gap).
 * Writers and recovery both place blocks with it, so recovery knows where each one must start.
 */
export function blockOffset(end: number, length: number, placement: BlockPlacement): number {
  return alignsBlock(length, placement) ? alignUp(end) : end;
}

/**
 * Whether a block written under `placement` is followed in the file by zeros up to the next
 * DIRECT_IO_ALIGN boundary (its start is one: blockOffset), so that it can be written around
 * the page cache and its extents follow from its offset whatever its length.
 */
export function padsBlock(length: number, placement: BlockPlacement): boolean {
  return placement === 'padded' && alignsBlock(length, placement);
}

/**
 * Where the bytes written for a record end: past a padded block's zeros (padsBlock), else at
 * its own end. The padding is not the host's data: the record, and the tape's logical size,
 * still end at entryEnd, and the next record may start inside the padding (a short block, a
 * filemark), whose write then waits for the zeros (BlockWriter).
 */
export function paddedEnd(e: IndexEntry, placement: BlockPlacement): number {
  return e.kind === 'block' && padsBlock(e.length, placement) ? alignUp(entryEnd(e)) : entryEnd(e);
}

/** Filemarks among objects 0..this one inclusive. */
export function filemarksThrough(e: IndexEntry): number {
  return e.filemarksBefore + (e.kind === 'filemark' ? 1 : 0);
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Appenders await it; this keeps a failure nobody waits for from crashing the process.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

export class IndexFile {
  private readonly window = Buffer.alloc(WINDOW * ENTRY_SIZE);
  private windowStart = 0;
  private windowCount = 0;
  /** Appended entries not yet handed to a write, contiguous from object `first`. */
  private queued: ({ first: number; entries: Buffer[] } & Deferred) | undefined;
  /** The write in flight, if any; at most one, so entries reach the file in order. */
  private writing: Promise<void> | undefined;
  /** The checksum this index's entries carry, by name and as a function. */
  readonly algorithm: ChecksumAlgorithm;
  readonly checksum: BlockChecksum;
  /** Where this index's blocks sit in the data file (blockOffset). */
  readonly placement: BlockPlacement;

  private constructor(
    private readonly handle: FileHandle,
    private readonly path: string,
    version: number,
    /** Whole entries in the file. */
    public count: number,
    public synced: number,
    /** The file ends in a partial entry (a torn append) that recovery must cut. */
    public tornTail = false,
  ) {
    this.algorithm = checksumAlgorithm(version);
    this.placement = placementOf(version);
    this.checksum = blockChecksum(this.algorithm);
  }

  static async create(path: string): Promise<IndexFile> {
    const handle = await open(path, 'wx+', 0o644);
    const header = Buffer.alloc(HEADER_SIZE);
    MAGIC.copy(header, 0);
    header.writeUInt32LE(VERSION, 8);
    header.writeUInt32LE(ENTRY_SIZE, 12);
    await handle.write(header, 0, HEADER_SIZE, 0);
    return new IndexFile(handle, path, VERSION, 0, 0);
  }

  static async open(path: string, readOnly: boolean): Promise<IndexFile> {
    const handle = await open(path, readOnly ? 'r' : 'r+');
    try {
      const { size } = await handle.stat();
      const header = Buffer.alloc(HEADER_SIZE);
      const { bytesRead } = await handle.read(header, 0, HEADER_SIZE, 0);
      if (
        bytesRead < HEADER_SIZE ||
        !header.subarray(0, 8).equals(MAGIC) ||
        !READABLE_VERSIONS.has(header.readUInt32LE(8)) ||
        header.readUInt32LE(12) !== ENTRY_SIZE
      ) {
        throw new MediaError('corrupt', `${path} is not a cartridge block index`);
      }
      // A torn append leaves a partial entry; it is ignored here and cut off by recovery.
      const count = Math.floor((size - HEADER_SIZE) / ENTRY_SIZE);
      const synced = Math.min(Number(header.readBigUInt64LE(SYNCED_AT)), count);
      const torn = (size - HEADER_SIZE) % ENTRY_SIZE !== 0;
      return new IndexFile(handle, path, header.readUInt32LE(8), count, synced, torn);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async get(i: number): Promise<IndexEntry> {
    if (i < 0 || i >= this.count) throw new RangeError(`object ${i} outside index of ${this.count}`);
    if (i < this.windowStart || i >= this.windowStart + this.windowCount) await this.fill(i);
    const entry = decodeEntry(this.window, (i - this.windowStart) * ENTRY_SIZE);
    if (!entry) throw new MediaError('corrupt', `${this.path}: entry ${i} is damaged`);
    return entry;
  }

  /** Loads the window holding entry i: forward from i, or ending at i when moving backwards. */
  private async fill(i: number): Promise<void> {
    // Entries still being written behind must be on file before the file is read.
    await this.settle();
    const start = i < this.windowStart ? Math.max(0, i - WINDOW + 1) : i;
    const n = Math.min(WINDOW, this.count - start);
    const bytes = n * ENTRY_SIZE;
    const { bytesRead } = await this.handle.read(this.window, 0, bytes, HEADER_SIZE + start * ENTRY_SIZE);
    if (bytesRead < bytes) throw new MediaError('corrupt', `${this.path}: index shorter than expected`);
    this.windowStart = start;
    this.windowCount = n;
  }

  /** Appends an entry and waits until it is written to the OS. */
  append(entry: IndexEntry): Promise<void> {
    return this.appendQueued(entry);
  }

  /**
   * Appends an entry now (count, window) and writes it behind, at the end of this turn of
   * the event loop: entries queued meanwhile go out together in one write. The promise
   * settles when this entry is in the file (or failed to get there).
   */
  appendQueued(entry: IndexEntry): Promise<void> {
    const i = this.count;
    const buf = encodeEntry(entry);
    this.count = i + 1;
    if (i === this.windowStart + this.windowCount && this.windowCount < WINDOW) {
      buf.copy(this.window, this.windowCount * ENTRY_SIZE);
      this.windowCount += 1;
    }
    this.queued ??= { first: i, entries: [], ...deferred() };
    this.queued.entries.push(buf);
    const written = this.queued.promise;
    this.startWrite();
    return written;
  }

  /** Waits until every appended entry has been written (or has failed for its appender). */
  private async settle(): Promise<void> {
    while (this.writing || this.queued) {
      this.startWrite();
      await this.writing;
    }
  }

  private startWrite(): void {
    if (this.writing || !this.queued) return;
    this.writing = (async () => {
      // Entries appended by the callbacks of this turn of the event loop go out together.
      await new Promise((resolve) => setImmediate(resolve));
      // Only startWrite takes the queue, and it waits while this write is on its way.
      const batch = this.queued!;
      this.queued = undefined;
      try {
        const bytes = batch.entries.length === 1 ? batch.entries[0]! : Buffer.concat(batch.entries);
        const at = HEADER_SIZE + batch.first * ENTRY_SIZE;
        // A few dozen bytes into the page cache: a pwrite here costs far less than handing it
        // to libuv's thread pool, whose promise, thread wake-up and completion per block took
        // 8 % of the event loop's time in a 256 KiB write stream (docs/performance.md).
        for (let done = 0; done < bytes.length;) {
          done += writeSync(this.handle.fd, bytes, done, bytes.length - done, at + done);
        }
        batch.resolve();
      } catch (err) {
        batch.reject(err);
      } finally {
        this.writing = undefined;
        this.startWrite();
      }
    })();
  }

  /** Keeps the first n entries. */
  async truncate(n: number): Promise<void> {
    await this.settle();
    await this.handle.truncate(HEADER_SIZE + n * ENTRY_SIZE);
    this.count = n;
    this.tornTail = false;
    this.windowCount = Math.max(0, Math.min(this.windowCount, n - this.windowStart));
    if (this.synced > n) await this.markSynced(n);
  }

  /** Records that the first n objects are durable; callers fsync data first. */
  async markSynced(n: number): Promise<void> {
    await this.settle();
    const buf = Buffer.alloc(8);
    buf.writeBigUInt64LE(BigInt(n));
    await this.handle.write(buf, 0, 8, SYNCED_AT);
    if (!syncDeferred()) await this.handle.datasync();
    this.synced = n;
  }

  /**
   * Object number of filemark m (0-based over the whole tape), searching objects from `from`.
   * Binary search on the cumulative filemark count: O(log n) entry reads, no scan.
   */
  async findFilemark(m: number, from = 0): Promise<number | undefined> {
    let lo = from;
    let hi = this.count;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (filemarksThrough(await this.get(mid)) >= m + 1) hi = mid;
      else lo = mid + 1;
    }
    if (lo >= this.count) return undefined;
    const e = await this.get(lo);
    return e.kind === 'filemark' && e.filemarksBefore === m ? lo : undefined;
  }

  async datasync(): Promise<void> {
    await this.settle();
    if (!syncDeferred()) await this.handle.datasync();
  }

  async close(): Promise<void> {
    await this.settle();
    await this.handle.close();
  }
}
