import { open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir } from '../util/atomic-file.js';
import { SerialQueue } from '../util/serial-queue.js';
import { MediaError, isErrno } from './errors.js';
import {
  IndexFile,
  blockOffset,
  entryEnd,
  filemarksThrough,
  padsBlock,
  type IndexEntry,
} from './index-file.js';
import {
  earlyWarningAt,
  partitionCapacities,
  partitionFiles,
  readMeta,
  writeMeta,
  type CartridgeMeta,
} from './layout.js';
import { readMam, updateMam, type MamAttributes } from './mam.js';
import { giveBlockBuffer } from './block-buffers.js';
import { DirectReader } from './direct-read.js';
import { BlockWriter } from './block-writer.js';
import { DirectWriter } from './direct-write.js';
import { writeCellBytes } from './write-cells.js';
import { paddedWrite } from './padded-blocks.js';
import { ReadAhead, continuesRun, readBytes, type BlockExtent, type BlockSource } from './read-ahead.js';
import { blockChecksums } from './checksum-thread.js';
import { recoverImage } from './recovery.js';
import { spaceBlocks, spaceFilemarks, type SpaceResult, type TapeView } from './space.js';
import { syncDeferred } from '../util/deferred-sync.js';

export type { SpaceResult } from './space.js';

/** Logical position as LTO reports it: data blocks and filemarks both count as objects. */
export interface TapePosition {
  /** The partition the head is in (0 on a one-partition tape). */
  partition: number;
  object: number;
  filemarksBefore: number;
  /** At beginning of partition (object 0). */
  bop: boolean;
  /** At end of data: the next read gets BLANK CHECK, the next write appends. */
  eod: boolean;
}

export type ReadResult =
  | {
      kind: 'data';
      data: Buffer;
      /** Full block length; more than data.length when maxLen cut it. */ length: number;
      /** An encrypted record (block-crypto.ts), read whole whatever maxLen said. */
      encrypted?: boolean;
    }
  | { kind: 'filemark' }
  | { kind: 'eod' };

/**
 * Written data past which the OS is asked to start writing back (a datasync nobody waits for):
 * the disk works while the host streams, instead of all at once at the next sync point.
 */
const WRITEBACK_STEP = 64 * 1024 * 1024;

/** How a data block is stored. */
export interface BlockOptions {
  /** The bytes are an encrypted record of the host's block (the drive encrypted it). */
  encrypted?: boolean;
}

export interface WriteResult {
  /** The write landed in the early-warning zone (the last 1% of capacity): report EOM/EW. */
  earlyWarning: boolean;
}

/** A block that has its place on the tape and is on its way to the files. */
export interface IssuedBlock extends WriteResult {
  /**
   * Settles once the block's data and index entry are in the OS (a kill -9 keeps it), or fails
   * with why not; the block's buffer must stay untouched until then.
   */
  written: Promise<void>;
}

/**
 * An open cartridge image: the tape a drive has threaded. Operations run one at a time in
 * call order. Writes go to the OS at once; `sync()` makes them durable and is what the drive
 * calls at WRITE FILEMARKS, REWIND and UNLOAD. While the host streams, write-back to the disk
 * is started every WRITEBACK_STEP bytes, so a sync point finds little left to do.
 *
 * Streamed blocks may be written behind (issueBlock): each takes its place on the tape at once
 * and its bytes go to the file while the next ones arrive, several at a time; index entries
 * follow in tape order, each only after its data. Any other operation first waits for those
 * writes. When one fails, no later block is indexed, and the next operation finds the tape
 * ending after the last block that made it.
 */
export class Cartridge {
  private pos = 0;
  private posFilemarks = 0;
  private closed = false;
  private readonly queue = new SerialQueue();
  private writer: BlockWriter;
  private readAhead: ReadAhead;
  /** Bytes written since the last write-back started. */
  private unflushed = 0;
  /** A write-back in progress, and the first failure of one (reported at the next sync). */
  private writeback: Promise<void> | undefined;
  private writebackError: unknown;
  /** The data file was replaced since the last sync: the directory entry must be synced too. */
  private dirChanged = false;
  /** A replaced data file being released (its blocks freed) in the background. */
  private releasing: Promise<void> = Promise.resolve();
  /**
   * The data file holds bytes past the data end, left by a write that cut the tape: they are
   * overwritten in place as the host writes on, and whatever is left is cut on close.
   */
  private staleTail = false;
  /** Blocks issued whose index entries are not appended yet (they count as objects already). */
  private unindexed = 0;
  /** Settles when the last issued block is indexed or has failed; entries chain through it. */
  private indexTail: Promise<void> = Promise.resolve();
  /** The first failure of a block written behind, until the tape's end is re-established. */
  private writeFailure: unknown;

  private constructor(
    readonly dir: string,
    /** The partition this instance reads and writes (its own index and data file). */
    readonly partition: number,
    private readonly files: { index: string; data: string },
    private readonly capacity: number,
    private meta: CartridgeMeta,
    private readonly index: IndexFile,
    private data: FileHandle,
    private direct: DirectReader,
    directWriter: DirectWriter,
    private dataEnd: number,
    private filemarks: number,
    private readonly directIo: boolean,
    /** BlockWriter's cells on this image's filesystem (write-cells.ts). */
    private readonly writeCell: number | undefined,
  ) {
    this.readAhead = new ReadAhead(this.source, this.index.algorithm);
    this.writer = this.blockWriter(directWriter);
  }

  /**
   * Opens an image for I/O, repairing a torn tail left by a crash. A stub raises `stub`.
   * Blocks are read and written around the page cache where the filesystem and the block
   * allow (DirectReader, DirectWriter), unless `directIo` is false. `partition` picks one
   * partition of a partitioned cartridge (default 0, the only one of most).
   */
  static async open(dir: string, opts: { directIo?: boolean; partition?: number } = {}): Promise<Cartridge> {
    const directIo = opts.directIo ?? true;
    const meta = await readMeta(dir);
    if (meta.stub) {
      throw new MediaError('stub', `${meta.label} is evicted (labelled stub); import it back before use`);
    }
    const partition = opts.partition ?? 0;
    const capacity = partitionCapacities(meta)[partition];
    if (capacity === undefined) {
      throw new MediaError('invalid', `${meta.label} has no partition ${partition}`);
    }
    const files = partitionFiles(partition);
    let data: FileHandle;
    try {
      data = await open(join(dir, files.data), 'r+');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) throw new MediaError('corrupt', `${meta.label} has no data file`);
      throw err;
    }
    let index: IndexFile | undefined;
    let direct: DirectReader | undefined;
    let writer: DirectWriter | undefined;
    try {
      index = await IndexFile.open(join(dir, files.index), false);
      const state = await recoverImage(index, data);
      direct = await DirectReader.open(join(dir, files.data), directIo);
      writer = await DirectWriter.open(join(dir, files.data), directIo);
      return new Cartridge(
        dir,
        partition,
        files,
        capacity,
        meta,
        index,
        data,
        direct,
        writer,
        state.dataEnd,
        state.filemarks,
        directIo,
        await writeCellBytes(dir),
      );
    } catch (err) {
      await writer?.close();
      await direct?.close();
      await index?.close();
      await data.close();
      if (isErrno(err, 'ENOENT')) throw new MediaError('corrupt', `${meta.label} has no block index`);
      throw err;
    }
  }

  get label(): string {
    return this.meta.label;
  }
  get generation(): number {
    return this.meta.generation;
  }
  get density(): number {
    return this.meta.density;
  }
  /** Capacity of this partition (of the whole tape when it has one partition). */
  get capacityBytes(): number {
    return this.capacity;
  }
  get writeProtected(): boolean {
    return this.meta.write_protected;
  }
  /**
   * Bytes the host has written (the logical image size): where the last record ends, with the
   * gaps before blocks that start on a 4 KiB boundary (blockOffset) but not the zeros written
   * after the last padded block (padsBlock), which are not the host's data; capacity and early
   * warning count the same way.
   */
  get sizeBytes(): number {
    return this.dataEnd;
  }
  /** Blocks plus filemarks on the tape; the object number of end of data. */
  get objectCount(): number {
    return this.index.count + this.unindexed;
  }

  position(): TapePosition {
    return {
      partition: this.partition,
      object: this.pos,
      filemarksBefore: this.posFilemarks,
      bop: this.pos === 0,
      eod: this.pos === this.objectCount,
    };
  }

  /**
   * Appends one data block at the current position, discarding anything after it. Resolves
   * once the data and its index entry are in the OS, so a kill -9 keeps the block.
   */
  async writeBlock(block: Buffer, opts: BlockOptions = {}): Promise<WriteResult> {
    const { written, ...result } = await this.issueBlock(block, opts);
    await written;
    return result;
  }

  /**
   * Appends one data block at the current position, discarding anything after it, and
   * resolves as soon as the block has its place (capacity and early warning are known then);
   * its bytes are written behind, overlapping the blocks issued after it. `written` says when
   * they are in the OS. Refusals (write protection, a full tape) reject at once.
   */
  issueBlock(block: Buffer, opts: BlockOptions = {}): Promise<IssuedBlock> {
    return this.exclusive(
      async () => {
        this.assertWritable();
        // Behind other issued blocks the position is end of data already.
        if (this.unindexed === 0) this.assertAppending();
        if (block.length === 0) throw new MediaError('invalid', 'a data block needs at least one byte');
        // Behind other issued blocks the position is end of data, where the next block goes.
        const end = this.unindexed > 0 ? this.dataEnd : await this.writeOffset();
        const start = blockOffset(end, block.length, this.index.placement);
        if (start + block.length > this.capacityBytes) {
          throw new MediaError('end_of_medium', `${this.label} is full (${this.capacityBytes} bytes)`);
        }
        if (this.unindexed === 0) await this.cutAtPosition(end);
        const entry: Omit<IndexEntry, 'crc'> = {
          kind: 'block',
          offset: start,
          length: block.length,
          filemarksBefore: this.posFilemarks,
          ...(opts.encrypted === true ? { encrypted: true } : {}),
        };
        // XXH3 (new images) at once; CRC behind the WRITE's status, on the helper thread or once
        // the loop is free (checksum-thread.ts).
        const checksum = blockChecksums(this.index.algorithm, block, [block.length]);
        // A padded block goes out with its zeros; the tape's data still ends at the block's end.
        const out = padsBlock(block.length, this.index.placement)
          ? paddedWrite(block)
          : { bytes: block, release: () => undefined };
        const data = this.writer.write(out.bytes, start).finally(out.release);
        this.unindexed += 1;
        this.dataEnd = start + block.length;
        this.pos += 1;
        const previous = this.indexTail;
        let indexed!: () => void;
        this.indexTail = new Promise<void>((resolve) => (indexed = resolve));
        const written = this.indexAfter(data, checksum, previous, entry, indexed);
        // The caller may drop `written`; a failure still reaches the next operation.
        written.catch(() => undefined);
        return { ...this.writeResult(), written };
      },
      { writeBehind: true },
    );
  }

  /** Writes n filemarks at the current position, discarding anything after it. */
  writeFilemarks(n: number): Promise<WriteResult> {
    return this.exclusive(async () => {
      this.assertWritable();
      if (!Number.isInteger(n) || n < 0) throw new MediaError('invalid', `filemark count ${n} is invalid`);
      if (n > 0) this.assertAppending();
      if (n === 0) return this.writeResult();
      const start = await this.writeOffset();
      await this.cutAtPosition(start);
      for (let k = 0; k < n; k++) {
        await this.index.append({
          kind: 'filemark',
          offset: start,
          length: 0,
          filemarksBefore: this.posFilemarks,
          crc: 0,
        });
        this.pos += 1;
        this.posFilemarks += 1;
        this.filemarks = this.posFilemarks;
      }
      return this.writeResult();
    });
  }

  /**
   * Reads the object at the position and moves past it; a block longer than maxLen is cut.
   * The data comes from the block buffer pool: a holder that is done with it may give it back.
   */
  readBlock(maxLen: number): Promise<ReadResult> {
    return this.exclusive(
      async () => {
        if (this.pos === this.index.count) return { kind: 'eod' };
        const object = this.pos;
        const e = await this.index.get(object);
        this.pos += 1;
        if (e.kind === 'filemark') {
          this.posFilemarks += 1;
          void this.readAhead.drop();
          return { kind: 'filemark' };
        }
        // An encrypted record only decrypts whole: the drive cuts the clear block instead.
        const n = e.encrypted === true ? e.length : Math.max(0, Math.min(maxLen, e.length));
        const { buf, bytesRead, checksum } = await (this.readAhead.take(object, e.offset, n) ??
          readBytes(this.source, e.offset, n));
        if (bytesRead !== n || (n === e.length && (checksum ?? this.index.checksum(buf)) !== e.crc)) {
          giveBlockBuffer(buf);
          throw new MediaError('corrupt', `${this.label}: block ${object} fails its checksum`);
        }
        // Reading whole blocks in sequence: fetch the next ones while this one goes to the host.
        if (n === e.length) await this.fillReadAhead();
        return {
          kind: 'data',
          data: buf,
          length: e.length,
          ...(e.encrypted === true ? { encrypted: true } : {}),
        };
      },
      { keepReadAhead: true },
    );
  }

  /** Moves to an object number; beyond end of data it stops at end of data (check `eod`). */
  locate(object: number): Promise<TapePosition> {
    return this.exclusive(async () => {
      const target = Math.max(0, Math.min(Math.trunc(object), this.index.count));
      await this.moveTo(target);
      return this.position();
    });
  }

  /** SPACE blocks (n < 0 backwards). Stops early at a filemark, end of data or BOP. */
  spaceBlocks(n: number): Promise<SpaceResult> {
    return this.exclusive(() => this.space(spaceBlocks, n));
  }

  /** SPACE filemarks (n < 0 backwards); backwards ends on the BOP side of the last one crossed. */
  spaceFilemarks(n: number): Promise<SpaceResult> {
    return this.exclusive(() => this.space(spaceFilemarks, n));
  }

  spaceToEod(): Promise<TapePosition> {
    return this.exclusive(async () => {
      this.pos = this.index.count;
      this.posFilemarks = this.filemarks;
      return this.position();
    });
  }

  rewind(): Promise<TapePosition> {
    return this.exclusive(async () => {
      this.pos = 0;
      this.posFilemarks = 0;
      return this.position();
    });
  }

  /** ERASE: everything from the current position to the end of the tape is gone. */
  erase(): Promise<void> {
    return this.exclusive(async () => {
      this.assertWritable();
      this.assertAppending();
      await this.cutAtPosition(await this.writeOffset(), { release: true });
    });
  }

  /** Makes every write so far durable (data, then index, then the synced mark). */
  sync(): Promise<void> {
    return this.exclusive(() => this.syncNow());
  }

  /** Stored MAM attributes as partition `partition` sees them (mam.ts readMam). */
  readMam(partition = 0): Promise<MamAttributes> {
    return this.exclusive(() => readMam(this.dir, partition));
  }

  /** Sets attributes (null deletes one); refused on a write-protected cartridge. */
  writeMam(changes: Map<number, Buffer | null>, partition = 0): Promise<MamAttributes> {
    return this.exclusive(async () => {
      this.assertWritable();
      return updateMam(this.dir, changes, partition);
    });
  }

  setWriteProtected(flag: boolean): Promise<void> {
    return this.exclusive(async () => {
      const meta = { ...this.meta, write_protected: flag };
      await writeMeta(this.dir, meta);
      this.meta = meta;
    });
  }

  /** Adopts meta.json as another partition of the same cartridge rewrote it. */
  useMeta(meta: CartridgeMeta): void {
    this.meta = meta;
  }

  /** Syncs and releases the files; the drive calls this on unload. Safe to call twice. */
  close(): Promise<void> {
    return this.queue.run(async () => {
      if (this.closed) return;
      this.closed = true;
      try {
        await this.readAhead.drop();
        await this.settleWrites();
        await this.syncNow();
        if (this.staleTail) await this.data.truncate(this.dataEnd);
      } finally {
        await this.indexTail;
        await this.writeback;
        await this.index.close();
        await this.writer.close();
        await this.direct.close();
        await this.data.close();
        await this.releasing;
      }
    });
  }

  /** Releases the files without syncing, as a killed process would; for crash tests only. */
  abandon(): Promise<void> {
    return this.queue.run(async () => {
      if (this.closed) return;
      this.closed = true;
      await this.readAhead.drop();
      await this.indexTail;
      await this.writeback;
      await this.index.close();
      await this.writer.close();
      await this.direct.close();
      await this.data.close();
      await this.releasing;
    });
  }

  private get source(): BlockSource {
    return { data: this.data, direct: this.direct };
  }

  /**
   * Tops the read-ahead window up with the blocks after the position, up to a filemark, in
   * runs of blocks that lie back to back in the data file, or a padding's gap apart (one read
   * each, continuesRun), once a whole run fits the window.
   */
  private async fillReadAhead(): Promise<void> {
    while (this.readAhead.roomForRun) {
      const run: BlockExtent[] = [];
      for (let object = this.readAhead.nextObject ?? this.pos; object < this.index.count; object++) {
        const e = await this.index.get(object);
        const block = { object, offset: e.offset, length: e.length };
        const first = run[0] ?? block;
        // The run's read spans its gaps too.
        const span = e.offset + e.length - first.offset;
        if (e.kind !== 'block' || !this.readAhead.wants(span, run.length + 1)) break;
        const prev = run.at(-1);
        if (prev && !continuesRun(prev, block)) break;
        run.push(block);
      }
      if (run.length === 0) return;
      this.readAhead.start(run);
    }
  }

  /**
   * Runs an operation alone; anything but a sequential read drops the read-ahead window, and
   * anything but another streamed block waits for the blocks written behind (a streamed block
   * too when none is on its way: a failure before it must have set the tape's end).
   */
  private exclusive<T>(
    op: () => Promise<T>,
    opts: { keepReadAhead?: boolean; writeBehind?: boolean } = {},
  ): Promise<T> {
    return this.queue.run(async () => {
      if (this.closed) throw new MediaError('closed', `${this.label} is no longer open`);
      if (!opts.keepReadAhead) void this.readAhead.drop();
      if (!opts.writeBehind || this.unindexed === 0) await this.settleWrites();
      return op();
    });
  }

  /**
   * Appends a block's index entry once its data is written and the entry before it is
   * appended, so the index never points past written data nor skips a block. After a failed
   * block nothing more is indexed: the tape ends before it.
   */
  private async indexAfter(
    data: Promise<void>,
    checksum: Promise<number[]>,
    previous: Promise<void>,
    entry: Omit<IndexEntry, 'crc'>,
    indexed: () => void,
  ): Promise<void> {
    const dataError = await data.then(
      () => undefined,
      (err: unknown) => err ?? new Error('data write failed'),
    );
    const [crc] = await checksum;
    await previous;
    this.unindexed -= 1;
    try {
      if (dataError !== undefined) this.writeFailure ??= dataError;
      if (this.writeFailure !== undefined) throw this.writeFailure;
      const inFile = this.index.appendQueued({ ...entry, crc: crc! });
      indexed();
      await inFile;
    } catch (err) {
      this.writeFailure ??= err;
      throw err;
    } finally {
      indexed();
    }
  }

  /**
   * Waits for the blocks written behind. After a failed one, the tape ends after the last
   * block that was indexed: the position goes there and the unindexed bytes are cut.
   */
  private async settleWrites(): Promise<void> {
    await this.indexTail;
    if (this.writeFailure === undefined) return;
    this.writeFailure = undefined;
    const count = this.index.count;
    const last = count > 0 ? await this.index.get(count - 1) : undefined;
    this.dataEnd = last ? entryEnd(last) : 0;
    this.filemarks = last ? filemarksThrough(last) : 0;
    this.pos = count;
    this.posFilemarks = this.filemarks;
    await this.data.truncate(this.dataEnd);
    this.staleTail = false;
  }

  private async syncNow(): Promise<void> {
    await this.writeback;
    const failed = this.writebackError;
    this.writebackError = undefined;
    if (failed) throw failed;
    if (this.index.synced === this.index.count && !this.dirChanged) return;
    if (!syncDeferred()) await this.data.datasync();
    this.unflushed = 0;
    if (this.dirChanged) {
      await fsyncDir(this.dir);
      this.dirChanged = false;
    }
    await this.index.datasync();
    await this.index.markSynced(this.index.count);
  }

  /** Starts a write-back once enough data is waiting; nobody waits for it but the next sync. */
  private noteWritten(bytes: number): void {
    this.unflushed += bytes;
    if (this.unflushed < WRITEBACK_STEP || this.writeback) return;
    this.unflushed = 0;
    this.writeback = this.data
      .datasync()
      .catch((err: unknown) => {
        this.writebackError ??= err;
      })
      .finally(() => {
        this.writeback = undefined;
      });
  }

  /** Writes to the data file, telling write-back of the bytes that went through the page cache. */
  private blockWriter(direct: DirectWriter): BlockWriter {
    return new BlockWriter(this.data, direct, (bytes) => this.noteWritten(bytes), this.writeCell);
  }

  get worm(): boolean {
    return this.meta.worm === true;
  }

  /** A WORM tape takes new objects only at end of data: what is written stays. */
  private assertAppending(): void {
    if (this.meta.worm && this.pos !== this.index.count) {
      throw new MediaError(
        'worm_overwrite',
        `${this.label} is a WORM cartridge: object ${this.pos} and after are written and cannot be overwritten`,
      );
    }
  }

  private assertWritable(): void {
    if (this.meta.write_protected)
      throw new MediaError('write_protected', `${this.label} is write-protected`);
  }

  /**
   * Where the record before the position ends, which is where a write at the position goes
   * (a large block perhaps a little further on: blockOffset).
   */
  private async writeOffset(): Promise<number> {
    if (this.pos === this.index.count) return this.dataEnd;
    return this.pos === 0 ? 0 : entryEnd(await this.index.get(this.pos - 1));
  }

  /**
   * Tape semantics: writing in the middle makes everything after the position unreadable.
   * The index goes first, durably: after a crash no entry may point past the cut, whatever
   * bytes are still there. A write then overwrites the old bytes in place, which costs the
   * disk no allocation and no freeing (a host reusing a scratch tape rewrites it from BOT);
   * `release` (ERASE) frees them now instead.
   */
  private async cutAtPosition(offset: number, opts: { release?: boolean } = {}): Promise<void> {
    if (this.pos === this.index.count) return;
    await this.index.truncate(this.pos);
    if (opts.release) {
      if (offset === 0) await this.replaceData();
      else await this.data.truncate(offset);
      this.staleTail = false;
    } else {
      await this.index.datasync();
      this.staleTail = true;
    }
    this.dataEnd = offset;
    this.filemarks = this.posFilemarks;
  }

  /**
   * Starts the data file afresh (ERASE at BOT): a new empty file takes the name at once and
   * the old one's blocks are freed in the background, since truncating gigabytes in place
   * would stall the host.
   */
  private async replaceData(): Promise<void> {
    await this.writeback;
    const path = join(this.dir, this.files.data);
    const next = `${path}.next`;
    const fresh = await open(next, 'w+');
    try {
      await rename(next, path);
    } catch (err) {
      await fresh.close();
      throw err;
    }
    const old = this.data;
    await this.direct.close();
    await this.writer.close();
    this.data = fresh;
    this.direct = await DirectReader.open(path, this.directIo);
    this.writer = this.blockWriter(await DirectWriter.open(path, this.directIo));
    this.readAhead = new ReadAhead(this.source, this.index.algorithm);
    this.unflushed = 0;
    this.dirChanged = true;
    // Closing the last handle of the unlinked file frees its blocks, on a pool thread.
    const previous = this.releasing;
    this.releasing = previous.then(() => old.close()).catch(() => undefined);
  }

  private async moveTo(object: number): Promise<void> {
    this.pos = object;
    this.posFilemarks =
      object === this.index.count ? this.filemarks : (await this.index.get(object)).filemarksBefore;
  }

  private writeResult(): WriteResult {
    return { earlyWarning: this.dataEnd >= earlyWarningAt(this.capacityBytes) };
  }

  /** Runs a SPACE computation on the current position and adopts where it ends. */
  private async space(fn: typeof spaceBlocks, n: number): Promise<SpaceResult> {
    const view: TapeView = {
      index: this.index,
      pos: this.pos,
      posFilemarks: this.posFilemarks,
      filemarks: this.filemarks,
    };
    const { result, to } = await fn(view, n);
    this.pos = to.pos;
    this.posFilemarks = to.posFilemarks;
    return result;
  }
}
