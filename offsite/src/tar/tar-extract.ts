import { cartridgeFilesOfMeta, isCartridgeImageFile } from '@vtl/api';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ZERO_BLOCK } from '../codec/messages.js';
import { OffsiteError } from '../errors.js';
import { DIRECT_ALIGN, DIRECT_MIN_BYTES, isDirectRefusal, openDirect } from './direct-io.js';
import { BLOCK, decodeHeader, padding, paxSize } from './tar-header.js';

interface OpenFile {
  name: string;
  handle: FileHandle;
  /** The same file opened with O_DIRECT, for aligned writes of large files (direct-io.ts). */
  direct: FileHandle | undefined;
  size: number;
}

/**
 * Bytes written between two write-behind fdatasyncs. One after every 64 MiB chunk held the
 * writes up behind the journal commits it forced (an import spent most of its time in write()
 * on a busy machine); every 256 MiB keeps the final sync short without that.
 */
const WRITE_BEHIND_BYTES = 256 * 1024 * 1024;

type State =
  | { kind: 'header' }
  | { kind: 'pax'; remaining: number; parts: Buffer[] }
  | { kind: 'data'; file: OpenFile; written: number }
  | { kind: 'skip'; remaining: number; then: State }
  | { kind: 'end' };

/**
 * Unpacks a cartridge tar fed chunk by chunk into a directory. Accepts only the cartridge's
 * own file names, each once, as regular files; anything else is 'verify_failed'. All-zero
 * 64 KiB blocks (as the codec marks them) are not written, so a sparse `data` stays sparse.
 */
export class TarExtractor {
  private state: State = { kind: 'header' };
  private readonly header = Buffer.alloc(BLOCK);
  private headerFill = 0;
  private paxSizeNext: number | undefined;
  private readonly files: OpenFile[] = [];
  /** The write-behind fdatasync running now, if any (see writeBehind). */
  private syncing: Promise<void> | undefined;
  /** What a write-behind fdatasync failed with: finish() throws it. */
  private syncError: unknown;
  /** Bytes written since the last write-behind fdatasync started. */
  private unsynced = 0;
  /** Wall time of the write-behind fdatasyncs, overlapped with the rest of the import. */
  writebackMs = 0;
  /** Bytes written through the page cache: unaligned runs, and everything once O_DIRECT was refused. */
  pageCacheBytes = 0;

  constructor(
    private readonly dir: string,
    /** Names the bucket copy for messages. */
    private readonly what: string,
  ) {}

  /** Consumes one chunk; `zero` has a 1 per all-zero ZERO_BLOCK of `raw`. */
  async write(raw: Buffer, zero: Uint8Array): Promise<void> {
    let i = 0;
    while (i < raw.length) {
      const s = this.state;
      switch (s.kind) {
        case 'header': {
          const n = Math.min(BLOCK - this.headerFill, raw.length - i);
          raw.copy(this.header, this.headerFill, i, i + n);
          this.headerFill += n;
          i += n;
          if (this.headerFill === BLOCK) {
            this.headerFill = 0;
            await this.onHeader();
          }
          break;
        }
        case 'pax': {
          const n = Math.min(s.remaining, raw.length - i);
          s.parts.push(Buffer.from(raw.subarray(i, i + n)));
          s.remaining -= n;
          i += n;
          if (s.remaining === 0) {
            const records = Buffer.concat(s.parts);
            this.paxSizeNext = paxSize(records);
            this.state = this.skipThen(padding(records.length), { kind: 'header' });
          }
          break;
        }
        case 'data': {
          const n = Math.min(s.file.size - s.written, raw.length - i);
          const cached = await writeSkippingZeros(s.file, raw, zero, i, n, s.written);
          this.unsynced += cached;
          this.pageCacheBytes += cached;
          s.written += n;
          i += n;
          if (s.written === s.file.size) this.state = this.skipThen(padding(s.file.size), { kind: 'header' });
          break;
        }
        case 'skip': {
          const n = Math.min(s.remaining, raw.length - i);
          s.remaining -= n;
          i += n;
          if (s.remaining === 0) this.state = s.then;
          break;
        }
        case 'end': {
          // After the end marker only zero padding may follow.
          if (raw.subarray(i).some((b) => b !== 0)) this.fail('has data after its end marker');
          i = raw.length;
          break;
        }
      }
    }
    this.writeBehind();
  }

  /**
   * Starts an fdatasync of the files written so far once WRITE_BEHIND_BYTES more were written,
   * unless one is still running, and does not wait for it: the disk writes back while the
   * next chunks download, instead of the
   * whole cartridge in finish()'s sync (the page cache holds gigabytes before the kernel
   * starts writing back on its own). Its errors are kept for finish() to throw: Linux reports
   * a write-back error to one fsync of a file descriptor only, so a later one would succeed.
   */
  private writeBehind(): void {
    if (this.syncing || this.files.length === 0 || this.unsynced < WRITE_BEHIND_BYTES) return;
    this.unsynced = 0;
    const handles = this.files.map((f) => f.handle);
    const t0 = performance.now();
    this.syncing = Promise.all(handles.map((h) => h.datasync())).then(
      () => {
        this.syncing = undefined;
        this.writebackMs += performance.now() - t0;
      },
      (err: unknown) => {
        this.syncing = undefined;
        this.syncError ??= err;
      },
    );
  }

  /** Checks the archive ended with every file complete, sets final sizes and syncs. */
  async finish(): Promise<void> {
    if (this.state.kind !== 'end') this.fail('ends before its end marker');
    await this.syncing;
    if (this.syncError !== undefined) throw this.syncError;
    for (const f of this.files) {
      // Trailing holes were never written: the size comes from truncate.
      await f.handle.truncate(f.size);
      await f.handle.sync();
    }
    // meta.json says how many partitions, so which files, the image must have.
    const metaText = this.files.some((f) => f.name === 'meta.json')
      ? await readFile(join(this.dir, 'meta.json'), 'utf8')
      : '';
    const missing = cartridgeFilesOfMeta(metaText).filter((n) => !this.files.some((f) => f.name === n));
    if (missing.length > 0) this.fail(`lacks ${missing.join(', ')}`);
    await this.close();
    const dirHandle = await open(this.dir, 'r');
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
  }

  /** Closes every file (after a failure; the caller removes the directory). */
  async close(): Promise<void> {
    await this.syncing;
    await Promise.all(
      this.files.splice(0).flatMap((f) => [f.handle.close(), ...(f.direct ? [f.direct.close()] : [])]),
    );
  }

  private skipThen(n: number, then: State): State {
    return n > 0 ? { kind: 'skip', remaining: n, then } : then;
  }

  private async onHeader(): Promise<void> {
    let h;
    try {
      h = decodeHeader(this.header);
    } catch (err) {
      this.fail((err as Error).message);
    }
    if (h.kind === 'end') {
      this.state = { kind: 'end' };
      return;
    }
    if (h.kind === 'pax') {
      this.state = h.size > 0 ? { kind: 'pax', remaining: h.size, parts: [] } : { kind: 'header' };
      return;
    }
    if (h.kind === 'other')
      this.fail(`holds an entry of type "${h.type}" (${h.name}); a cartridge has only files`);
    const size = this.paxSizeNext ?? h.size;
    this.paxSizeNext = undefined;
    if (!isCartridgeImageFile(h.name)) {
      this.fail(`holds "${h.name}", which is not a cartridge file`);
    }
    if (this.files.some((f) => f.name === h.name)) this.fail(`holds ${h.name} twice`);
    const path = join(this.dir, h.name);
    const handle = await open(path, 'wx', 0o644);
    const direct = size >= DIRECT_MIN_BYTES ? await openDirect(path) : undefined;
    const file = { name: h.name, handle, direct, size };
    this.files.push(file);
    this.state = size > 0 ? { kind: 'data', file, written: 0 } : { kind: 'header' };
  }

  private fail(why: string): never {
    throw new OffsiteError('verify_failed', `the tar stream of ${this.what} ${why}`);
  }
}

/**
 * Writes raw[at, at+n) at file position `pos`, leaving out the all-zero blocks the codec
 * marked (the file is new, so what is not written reads as zeros). `raw` starts at its ring
 * buffer's aligned first byte. Returns the bytes that went through the page cache.
 */
async function writeSkippingZeros(
  file: OpenFile,
  raw: Buffer,
  zero: Uint8Array,
  at: number,
  n: number,
  pos: number,
): Promise<number> {
  let runStart = -1;
  let cached = 0;
  const end = at + n;
  const flush = async (upTo: number) => {
    if (runStart < 0) return;
    cached += await writeRun(file, raw, runStart, upTo - runStart, pos + (runStart - at));
    runStart = -1;
  };
  for (let off = at; off < end;) {
    const block = Math.floor(off / ZERO_BLOCK);
    const blockEnd = Math.min((block + 1) * ZERO_BLOCK, end);
    if (zero[block] === 1) await flush(off);
    else if (runStart < 0) runStart = off;
    off = blockEnd;
  }
  await flush(end);
  return cached;
}

/**
 * One run of bytes: its aligned part with O_DIRECT when the file has a direct handle, the rest
 * (and everything, once the file system refused an O_DIRECT write) through the page cache.
 * Returns the bytes written through the page cache.
 */
async function writeRun(
  file: OpenFile,
  buf: Buffer,
  at: number,
  length: number,
  position: number,
): Promise<number> {
  const aligned = length - (length % DIRECT_ALIGN);
  if (file.direct && aligned > 0 && at % DIRECT_ALIGN === 0 && position % DIRECT_ALIGN === 0) {
    try {
      const done = await writeDirect(file.direct, buf, at, aligned, position);
      if (done === length) return 0;
      if (done > 0) return writeRun(file, buf, at + done, length - done, position + done);
    } catch (err) {
      if (!isDirectRefusal(err)) throw err;
      // Not this buffer or this file system: the page cache from now on.
      const direct = file.direct;
      file.direct = undefined;
      await direct.close();
    }
  }
  await writeFully(file.handle, buf, at, length, position);
  return length;
}

/**
 * Writes until `length` bytes are written or `goOn` (given the total so far and the last count)
 * says stop; returns how many were written.
 */
async function writeLoop(
  handle: FileHandle,
  buf: Buffer,
  at: number,
  length: number,
  position: number,
  goOn: (done: number, written: number) => boolean = () => true,
): Promise<number> {
  let done = 0;
  while (done < length) {
    const { bytesWritten } = await handle.write(buf, at + done, length - done, position + done);
    done += bytesWritten;
    if (!goOn(done, bytesWritten)) break;
  }
  return done;
}

/** O_DIRECT: writes whole aligned blocks until done or the kernel stops short; returns how many. */
const writeDirect = (handle: FileHandle, buf: Buffer, at: number, length: number, position: number) =>
  // A short count that breaks the alignment (or no progress): the page cache does the rest.
  writeLoop(handle, buf, at, length, position, (done, written) => written > 0 && done % DIRECT_ALIGN === 0);

const writeFully = async (handle: FileHandle, buf: Buffer, at: number, length: number, position: number) => {
  await writeLoop(handle, buf, at, length, position);
};
