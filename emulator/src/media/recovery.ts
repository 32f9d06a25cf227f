import type { FileHandle } from 'node:fs/promises';
import type { BlockChecksum } from './checksum.js';
import { DIRECT_IO_ALIGN } from './aligned-buffers.js';
import { isMediaError } from './errors.js';
import {
  blockOffset,
  entryEnd,
  filemarksThrough,
  paddedEnd,
  type IndexEntry,
  type IndexFile,
} from './index-file.js';

/** What an image holds once it is consistent. */
export interface RecoveredImage {
  objects: number;
  /** Where the last record ends (the tape's logical size; a padded block's zeros not counted). */
  dataEnd: number;
  filemarks: number;
  /** Entries dropped and data bytes cut because a crash tore them (past the last record's padding). */
  droppedObjects: number;
  droppedBytes: number;
}

/**
 * Brings an image back to a consistent state after any crash: every index entry must chain on
 * from the one before it (where blockOffset places it) and point at fully written data with a
 * matching CRC; the first entry
 * that does not, and everything after it, is dropped, and the data file is cut at the last good
 * record, or past the zeros of a padded block it shares a page with (keptEnd: a cleanly closed
 * image is not cut at every open). Only entries after the last sync point are checked, so a cleanly synced image (the
 * usual case: the drive syncs on filemarks, rewind and unload) opens without reading any data.
 */
export async function recoverImage(index: IndexFile, data: FileHandle): Promise<RecoveredImage> {
  const dataSize = (await data.stat()).size;
  let start = index.synced;
  let prev = start > 0 ? await tryGet(index, start - 1) : undefined;
  if (start > 0 && (!prev || entryEnd(prev) > dataSize)) {
    // The synced prefix itself does not fit the data file: trust nothing, verify from BOP.
    start = 0;
    prev = undefined;
  }
  let good = start;
  let end = prev ? entryEnd(prev) : 0;
  let filemarks = prev ? filemarksThrough(prev) : 0;
  for (let i = start; i < index.count; i++) {
    const e = await tryGet(index, i);
    const expectedOffset = e?.kind === 'block' ? blockOffset(end, e.length, index.placement) : end;
    if (!e || !(await verifyEntry(e, expectedOffset, filemarks, dataSize, data, index.checksum))) break;
    good = i + 1;
    end = entryEnd(e);
    if (e.kind === 'filemark') filemarks += 1;
  }
  const kept = Math.min(dataSize, await keptEnd(index, good, end));
  const droppedObjects = index.count - good;
  const droppedBytes = dataSize - kept;
  const torn = droppedObjects > 0 || index.tornTail;
  if (torn) await index.truncate(good);
  if (droppedBytes > 0) await data.truncate(kept);
  if (torn || droppedBytes > 0 || index.synced < index.count) {
    await data.datasync();
    await index.datasync();
    await index.markSynced(index.count);
  }
  return { objects: good, dataEnd: end, filemarks, droppedObjects, droppedBytes };
}

/**
 * Where the data file may end after the first `count` records, the last of which ends at
 * `end`: past the zeros of a padded block (index-file.ts paddedEnd) when one ends in the same
 * 4 KiB page as `end` (the short blocks and filemarks after it lie inside its zeros), else at
 * `end`. Only the records in that page are read.
 */
async function keptEnd(index: IndexFile, count: number, end: number): Promise<number> {
  const page = end - (end % DIRECT_IO_ALIGN);
  for (let i = count - 1; i >= 0; i--) {
    const e = await index.get(i);
    if (entryEnd(e) <= page) break;
    if (paddedEnd(e, index.placement) > end) return paddedEnd(e, index.placement);
  }
  return end;
}

async function tryGet(index: IndexFile, i: number): Promise<IndexEntry | undefined> {
  try {
    return await index.get(i);
  } catch (err) {
    if (isMediaError(err, 'corrupt')) return undefined;
    throw err;
  }
}

async function verifyEntry(
  e: IndexEntry,
  expectedOffset: number,
  expectedFilemarks: number,
  dataSize: number,
  data: FileHandle,
  checksum: BlockChecksum,
): Promise<boolean> {
  if (e.offset !== expectedOffset || e.filemarksBefore !== expectedFilemarks) return false;
  if (entryEnd(e) > dataSize) return false;
  if (e.kind === 'filemark') return e.length === 0;
  const buf = Buffer.alloc(e.length);
  const { bytesRead } = await data.read(buf, 0, e.length, e.offset);
  return bytesRead === e.length && checksum(buf) === e.crc;
}
