import { constants, open, type FileHandle } from 'node:fs/promises';
import { DIRECT_IO_ALIGN, giveAlignedBuffer, takeAlignedBuffer } from './aligned-buffers.js';
import { isErrno } from './errors.js';

/** Bytes read from the data file; fewer than asked means the file is shorter than the index says. */
export interface ReadBytes {
  buf: Buffer;
  bytesRead: number;
  /** The checksum of `buf`, when a read-ahead computed it already. */
  checksum?: number;
}

/**
 * Reads blocks of a data file around the page cache (O_DIRECT): the disk's data lands in the
 * block buffer itself, instead of being placed in freshly allocated page-cache pages and copied
 * out of them. A restore streams each byte once, so caching it only costs — on a VM that hands
 * freed memory back to its host, most of a buffered read's CPU time is faulting those pages in.
 * Data still in the page cache (written and not yet flushed) is written back by the kernel
 * before a direct read of it. Where the filesystem has no O_DIRECT, or refuses an aligned read,
 * `read` answers undefined and the caller reads the ordinary way.
 */
/** `path` opened with O_DIRECT, or undefined when disabled or the filesystem has no O_DIRECT. */
export async function openDirect(
  path: string,
  flags: number,
  enabled: boolean,
): Promise<FileHandle | undefined> {
  if (!enabled || constants.O_DIRECT === undefined) return undefined;
  try {
    return await open(path, flags | constants.O_DIRECT);
  } catch (err) {
    if (isErrno(err, 'EINVAL') || isErrno(err, 'EOPNOTSUPP')) return undefined;
    throw err;
  }
}

export class DirectReader {
  private constructor(private handle: FileHandle | undefined) {}

  /** Opens `path` for direct reads; `enabled: false` (or no O_DIRECT support) reads nothing. */
  static async open(path: string, enabled = true): Promise<DirectReader> {
    return new DirectReader(await openDirect(path, constants.O_RDONLY, enabled));
  }

  /** n bytes at offset in an aligned pool buffer, or undefined to read them the ordinary way. */
  async read(offset: number, n: number): Promise<ReadBytes | undefined> {
    const handle = this.handle;
    if (!handle) return undefined;
    const start = offset - (offset % DIRECT_IO_ALIGN);
    const skip = offset - start;
    const length = Math.ceil((skip + n) / DIRECT_IO_ALIGN) * DIRECT_IO_ALIGN;
    const slot = takeAlignedBuffer(length);
    if (!slot) return undefined;
    let bytesRead: number;
    try {
      ({ bytesRead } = await handle.read(slot, 0, length, start));
    } catch (err) {
      giveAlignedBuffer(slot);
      if (!isErrno(err, 'EINVAL')) throw err;
      // The filesystem wants another alignment: this file is read the ordinary way from now on.
      this.handle = undefined;
      await handle.close().catch(() => undefined);
      return undefined;
    }
    return {
      buf: slot.subarray(skip, skip + n),
      bytesRead: Math.max(0, Math.min(n, bytesRead - skip)),
    };
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }
}
