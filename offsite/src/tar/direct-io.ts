import { constants } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/*
 * O_DIRECT writes for an import's large files. Through the page cache, writing a cartridge's
 * tar bytes cost more CPU than downloading, hashing and decompressing them together (3.5 s per
 * GiB on a busy 2-core machine: page allocation and copying, all under the file's lock, so
 * one core at a time); O_DIRECT hands the buffer to the disk instead. The file system wants the
 * buffer's address, the file position and the length aligned (the device's logical block size,
 * 512 or 4096 bytes): the tar keeps file data on 512-byte boundaries, chunk buffers are aligned
 * here, and any write that does not fit, or a file system without O_DIRECT (tmpfs), goes
 * through the page cache as before.
 */

/** Alignment a write must have to be tried with O_DIRECT; the file system may want more. */
export const DIRECT_ALIGN = 512;
/** Files smaller than this are written through the page cache only. */
export const DIRECT_MIN_BYTES = 1024 * 1024;

/** Opens an existing file a second time for O_DIRECT writes; undefined where that is refused. */
export async function openDirect(path: string): Promise<FileHandle | undefined> {
  if (constants.O_DIRECT === undefined) return undefined;
  try {
    return await open(path, constants.O_WRONLY | constants.O_DIRECT);
  } catch {
    return undefined;
  }
}

/** Whether an error is O_DIRECT's refusal of an unaligned (or unsupported) write. */
export function isDirectRefusal(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'EINVAL';
}

/**
 * `count` views of new SharedArrayBuffers of `bytes` bytes whose first byte the file system
 * in `dir` accepts as an O_DIRECT buffer address. Found by writing one 4 KiB block from each
 * 16-byte offset of the first buffer into a scratch file (allocations of one size share their
 * alignment; each buffer is checked); a buffer without one is left unaligned, and its writes
 * go through the page cache. The scratch file is removed before this returns.
 */
export async function alignedBuffers(dir: string, count: number, bytes: number): Promise<Uint8Array[]> {
  const plain = () => new Uint8Array(new SharedArrayBuffer(bytes));
  const probePath = join(dir, '.direct-io-probe');
  const probe = await (async () => {
    if (constants.O_DIRECT === undefined) return undefined;
    try {
      return await open(probePath, constants.O_WRONLY | constants.O_CREAT | constants.O_DIRECT, 0o600);
    } catch {
      return undefined;
    }
  })();
  if (!probe) {
    await rm(probePath, { force: true });
    return Array.from({ length: count }, plain);
  }
  const SLACK = 4096;
  const BLOCK = 4096;
  const fits = async (buf: Uint8Array, off: number) => {
    try {
      await probe.write(buf, off, BLOCK, 0);
      return true;
    } catch {
      return false;
    }
  };
  try {
    const out: Uint8Array[] = [];
    let guess = -1;
    for (let i = 0; i < count; i++) {
      const whole = new Uint8Array(new SharedArrayBuffer(bytes + SLACK + BLOCK));
      let at = guess >= 0 && (await fits(whole, guess)) ? guess : -1;
      for (let off = 0; at < 0 && off < SLACK; off += 16) if (await fits(whole, off)) at = off;
      if (at < 0) {
        out.push(plain());
        continue;
      }
      guess = at;
      out.push(whole.subarray(at, at + bytes));
    }
    return out;
  } finally {
    await probe.close();
    await rm(probePath, { force: true });
  }
}
