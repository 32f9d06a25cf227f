import { randomBytes } from 'node:crypto';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isoNow } from '@vtl/api/base';
import { fsyncDir } from '../util/atomic-file.js';
import { isErrno } from './errors.js';
import { IndexFile, entryEnd } from './index-file.js';
import {
  IMAGE_FILES,
  MAX_PARTITIONS,
  imageFiles,
  partitionCapacities,
  partitionFiles,
  readMeta,
  writeMeta,
} from './layout.js';
import { MINT_TMP_PREFIX } from './mint.js';
import { storedBytes } from './extent-bytes.js';

/** What the status view reports of one image (spec §2.7). */
export interface CartridgeStats {
  /** Bytes the host has written. */
  size_bytes: number;
  /** Allocated on disk after sparse holes and compression (extent-bytes.ts: compsize on btrfs). */
  phys_bytes: number;
  /** Newest change to any file of the image, ISO 8601 UTC. */
  modified: string;
  stub: boolean;
  /** The cartridge's capacity (meta.json): its generation's, or what the minter or a SET CAPACITY set. */
  capacity_bytes: number;
}

const TRASH_PREFIX = '.trash-';

/**
 * Sizes from four stat calls and the index's last entry; never reads data. Raises
 * `not_found` when there is no image.
 */
export async function cartridgeStats(dir: string): Promise<CartridgeStats> {
  const meta = await readMeta(dir);
  let fileSize = 0;
  let phys = 0;
  let newest = 0;
  const partitions = partitionCapacities(meta).length;
  const dataFiles = new Set(Array.from({ length: partitions }, (_, p) => partitionFiles(p).data));
  const present: string[] = [];
  let signature = '';
  for (const name of imageFiles(partitions)) {
    try {
      const st = await stat(join(dir, name));
      phys += st.blocks * 512;
      newest = Math.max(newest, st.mtimeMs);
      if (dataFiles.has(name)) fileSize += st.size;
      present.push(join(dir, name));
      signature += `${name}:${st.size}:${st.blocks}:${st.mtimeMs};`;
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
    }
  }
  phys = await storedBytes(dir, present, phys, signature);
  let size = 0;
  if (!meta.stub) {
    for (let p = 0; p < partitions; p++) size += (await indexedEnd(dir, p)) ?? Number.NaN;
    if (Number.isNaN(size)) size = fileSize;
  }
  return {
    size_bytes: size,
    phys_bytes: phys,
    modified: isoNow(new Date(newest)),
    stub: meta.stub,
    capacity_bytes: meta.capacity_bytes,
  };
}

/**
 * Where the data the index knows of ends: the bytes the host has written. The data file may
 * hold more, for a while, when a rewritten tape is overwritten in place (cartridge.ts).
 */
async function indexedEnd(dir: string, partition: number): Promise<number | undefined> {
  let index: IndexFile | undefined;
  try {
    index = await IndexFile.open(join(dir, partitionFiles(partition).index), true);
    return index.count > 0 ? entryEnd(await index.get(index.count - 1)) : 0;
  } catch {
    return undefined;
  } finally {
    await index?.close();
  }
}

export async function isStub(dir: string): Promise<boolean> {
  return (await readMeta(dir)).stub;
}

/**
 * Evicts: keeps the labelled stub (meta.json, mam.json) and deletes every partition's data and
 * index. The stub
 * flag is written first, so a crash half way leaves a stub with leftovers, never a cartridge
 * whose data silently vanished. Idempotent; the cartridge must not be loaded in a drive.
 */
export async function makeStub(dir: string): Promise<void> {
  const meta = await readMeta(dir);
  if (!meta.stub) await writeMeta(dir, { ...meta, stub: true });
  for (let p = 0; p < MAX_PARTITIONS; p++) {
    await rm(join(dir, partitionFiles(p).data), { force: true });
    await rm(join(dir, partitionFiles(p).index), { force: true });
  }
  await fsyncDir(dir);
}

/** Deletes an image: renamed aside first so a crash never leaves a half-deleted cartridge. */
export async function deleteCartridge(dir: string): Promise<void> {
  const trash = join(dirname(dir), `${TRASH_PREFIX}${basename(dir)}-${randomBytes(4).toString('hex')}`);
  try {
    await rename(dir, trash);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return;
    throw err;
  }
  await fsyncDir(dirname(dir));
  await rm(trash, { recursive: true, force: true });
}

/** Labels that have an image directory in a pool directory. */
export async function listImages(mediaDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(mediaDir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
  const labels: string[] = [];
  for (const name of names.sort()) {
    if (name.startsWith('.')) continue;
    try {
      await stat(join(mediaDir, name, IMAGE_FILES.meta));
      labels.push(name);
    } catch (err) {
      if (!isErrno(err, 'ENOENT') && !isErrno(err, 'ENOTDIR')) throw err;
    }
  }
  return labels;
}

/** Removes what an interrupted mint or delete left behind; returns the names removed. */
export async function sweepMediaDir(mediaDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(mediaDir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
  const leftovers = names.filter((n) => n.startsWith(MINT_TMP_PREFIX) || n.startsWith(TRASH_PREFIX));
  for (const name of leftovers) await rm(join(mediaDir, name), { recursive: true, force: true });
  return leftovers;
}
