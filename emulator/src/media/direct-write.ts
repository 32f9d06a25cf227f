import { constants, type FileHandle } from 'node:fs/promises';
import { DIRECT_IO_ALIGN, isDirectIoAligned } from './aligned-buffers.js';
import { openDirect } from './direct-read.js';
import { isErrno } from './errors.js';

/**
 * Writes runs of blocks to a data file around the page cache (O_DIRECT) when they allow it:
 * the offset and every block's length are multiples of DIRECT_IO_ALIGN and every block sits in
 * an aligned pool slot (the iSCSI reader lands write data in those). The disk then takes the
 * data straight from the block buffers: no copy into page-cache pages, no page allocation, no
 * write-back later — that copy was the largest single cost of a streamed write. Data written
 * this way is in the file when the write returns, as with a buffered write, so a killed
 * emulator loses none of it. A block of another length comes here padded with zeros to a
 * multiple (padded-blocks.ts) when its index places it so. Anything else (short odd blocks,
 * filesystems without O_DIRECT) answers false and the caller writes the ordinary way; the
 * kernel keeps both kinds coherent.
 */
export class DirectWriter {
  private constructor(private handle: FileHandle | undefined) {}

  /** Opens `path` for direct writes; `enabled: false` (or no O_DIRECT support) writes nothing. */
  static async open(path: string, enabled = true): Promise<DirectWriter> {
    return new DirectWriter(await openDirect(path, constants.O_WRONLY, enabled));
  }

  /** Writes `blocks` back to back from `offset` if they can go around the page cache; false when not. */
  async write(blocks: Buffer[], offset: number): Promise<boolean> {
    const handle = this.handle;
    if (!handle || offset % DIRECT_IO_ALIGN !== 0) return false;
    if (!blocks.every((b) => b.length % DIRECT_IO_ALIGN === 0 && isDirectIoAligned(b))) return false;
    try {
      await writeAll(handle, blocks, offset);
    } catch (err) {
      if (!isErrno(err, 'EINVAL')) throw err;
      // The filesystem wants another alignment: this file is written the ordinary way from now on.
      this.handle = undefined;
      await handle.close().catch(() => undefined);
      return false;
    }
    return true;
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }
}

/** Writes buffers back to back from `offset` with pwritev, going on after a short write. */
export async function writeAll(handle: FileHandle, blocks: Buffer[], offset: number): Promise<void> {
  let rest = blocks;
  let at = offset;
  while (rest.length > 0) {
    const { bytesWritten } = await handle.writev(rest, at);
    at += bytesWritten;
    rest = skipBytes(rest, bytesWritten);
  }
}

function skipBytes(blocks: Buffer[], n: number): Buffer[] {
  let i = 0;
  while (i < blocks.length && n >= blocks[i]!.length) n -= blocks[i++]!.length;
  const rest = blocks.slice(i);
  if (n > 0 && rest.length > 0) rest[0] = rest[0]!.subarray(n);
  return rest;
}
