import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isoNow } from '@vtl/api/base';
import { fsyncDir } from '../util/atomic-file.js';
import { Cartridge } from './cartridge.js';
import { MediaError, isErrno } from './errors.js';
import { IndexFile } from './index-file.js';
import { IMAGE_FILES, META_FORMAT, capacityBytes, cartridgeDir, ltoGeneration, writeMeta } from './layout.js';
import { defaultMam, writeMam } from './mam.js';
import { buildVol1, volumeIdOf } from './vol1.js';

export interface MintOptions {
  mediaDir: string;
  label: string;
  /** LTO generation of the medium (3..10). */
  generation: number;
  /** Overrides the generation's native capacity; tests use a few KB to reach end of medium. */
  capacityBytes?: number;
  /** A WORM cartridge (its label carries the WORM media identifier, LT..LZ). */
  worm?: boolean;
  now?: Date;
}

/** Directory names that start with these are a mint or delete in progress, never a cartridge. */
export const MINT_TMP_PREFIX = '.mint-';

/**
 * Creates a labelled cartridge: VOL1 as the first block, then one filemark, synced. The image
 * is built in a hidden temp directory and renamed into place, so a crash leaves either no
 * cartridge or a complete one. Raises `exists` when the label already has an image.
 */
export async function mintCartridge(opts: MintOptions): Promise<string> {
  const staged = await stageCartridge(opts);
  await placeStaged(opts.mediaDir, opts.label, staged);
  await fsyncDir(opts.mediaDir);
  return cartridgeDir(opts.mediaDir, opts.label);
}

/**
 * Builds a cartridge image in a hidden temp directory of mediaDir and returns that directory;
 * placeStaged() renames it into place. A batch stages all its images, makes them durable with
 * one filesystem sync, and only then renames them.
 */
export async function stageCartridge(opts: MintOptions): Promise<string> {
  const gen = ltoGeneration(opts.generation);
  const created = opts.now ?? new Date();
  const tmp = join(opts.mediaDir, `${MINT_TMP_PREFIX}${opts.label}-${randomBytes(4).toString('hex')}`);
  await mkdir(opts.mediaDir, { recursive: true });
  await mkdir(tmp);
  try {
    await writeMeta(tmp, {
      format: META_FORMAT,
      label: opts.label,
      generation: gen.gen,
      density: gen.density,
      capacity_bytes: opts.capacityBytes ?? capacityBytes(gen.gen),
      write_protected: false,
      ...(opts.worm ? { worm: true } : {}),
      stub: false,
      created: isoNow(created),
    });
    await writeMam(tmp, defaultMam({ label: opts.label, density: gen.density, created, worm: opts.worm }));
    await (await open(join(tmp, IMAGE_FILES.data), 'wx', 0o644)).close();
    await (await IndexFile.create(join(tmp, IMAGE_FILES.index))).close();
    // Two tiny writes: the page cache and one sync beat direct I/O here.
    const cart = await Cartridge.open(tmp, { directIo: false });
    try {
      await cart.writeBlock(buildVol1(volumeIdOf(opts.label)));
      await cart.writeFilemarks(1);
    } finally {
      await cart.close();
    }
    await fsyncDir(tmp);
    return tmp;
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** Renames a staged image into place (the caller syncs mediaDir); `exists` when the label has one. */
export async function placeStaged(mediaDir: string, label: string, staged: string): Promise<void> {
  try {
    await rename(staged, cartridgeDir(mediaDir, label));
  } catch (err) {
    await rm(staged, { recursive: true, force: true });
    if (isErrno(err, 'EEXIST') || isErrno(err, 'ENOTEMPTY')) {
      throw new MediaError('exists', `cartridge ${label} already has an image in ${mediaDir}`);
    }
    throw err;
  }
}
