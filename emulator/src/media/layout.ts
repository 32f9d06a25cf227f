import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LTO_GENERATIONS, type LtoGeneration } from '@vtl/api';
import { writeFileAtomic } from '../util/atomic-file.js';
import { MediaError, isErrno } from './errors.js';

/**
 * One directory per cartridge, `<media_dir>/<LABEL>/`. These are every file an image has, so a
 * deterministic tar of exactly this list carries a cartridge whole (export and import).
 */
export const IMAGE_FILES = {
  meta: 'meta.json',
  mam: 'mam.json',
  index: 'index',
  data: 'data',
} as const;

/** Files an evicted stub keeps: the label and its identity, no tape content. */
export const STUB_FILES = [IMAGE_FILES.meta, IMAGE_FILES.mam] as const;

export const META_FORMAT = 1;

/** meta.json: what the cartridge is; rewritten atomically, never appended to. */
export interface CartridgeMeta {
  format: number;
  label: string;
  generation: number;
  /** SCSI density code of the generation (api LTO_GENERATIONS). */
  density: number;
  capacity_bytes: number;
  write_protected: boolean;
  /** Evicted: data and index were deleted after a verified bucket copy. */
  stub: boolean;
  created: string;
}

export function cartridgeDir(mediaDir: string, label: string): string {
  return join(mediaDir, label);
}

export function ltoGeneration(gen: number): LtoGeneration {
  const found = LTO_GENERATIONS.find((g) => g.gen === gen);
  if (!found) throw new MediaError('invalid', `unknown LTO generation ${gen}; use one of 3..10`);
  return found;
}

/** Native capacity in bytes: the api's capacityMb is decimal megabytes, as LTO is marketed. */
export function capacityBytes(gen: number): number {
  return ltoGeneration(gen).capacityMb * 1_000_000;
}

/**
 * Early-warning zone: the last 1% of capacity. Real drives warn a few GB before the end;
 * a proportional zone gives backup software the same headroom on every generation and
 * stays meaningful for the tiny capacities tests use.
 */
export function earlyWarningAt(capacity: number): number {
  return capacity - Math.ceil(capacity / 100);
}

export async function readMeta(dir: string): Promise<CartridgeMeta> {
  let text: string;
  try {
    text = await readFile(join(dir, IMAGE_FILES.meta), 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) throw new MediaError('not_found', `no cartridge image at ${dir}`);
    throw err;
  }
  let meta: CartridgeMeta;
  try {
    meta = JSON.parse(text) as CartridgeMeta;
  } catch {
    throw new MediaError('corrupt', `${join(dir, IMAGE_FILES.meta)} is not valid JSON`);
  }
  if (
    meta.format !== META_FORMAT ||
    typeof meta.label !== 'string' ||
    !Number.isFinite(meta.capacity_bytes)
  ) {
    throw new MediaError('corrupt', `${join(dir, IMAGE_FILES.meta)} has an unknown format`);
  }
  return meta;
}

export async function writeMeta(dir: string, meta: CartridgeMeta): Promise<void> {
  await writeFileAtomic(join(dir, IMAGE_FILES.meta), `${JSON.stringify(meta, null, 2)}\n`);
}
