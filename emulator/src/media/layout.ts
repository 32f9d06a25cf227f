import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CARTRIDGE_BASE_FILES,
  LTO_GENERATIONS,
  MAX_PARTITIONS,
  META_FORMAT,
  META_FORMAT_PARTITIONED,
  cartridgeImageFiles,
  parseCartridgeMeta,
  partitionFiles,
  type CartridgeMeta,
  type LtoGeneration,
} from '@vtl/api/base';
import { writeFileAtomic } from '../util/atomic-file.js';
import { MediaError, isErrno } from './errors.js';

/**
 * One directory per cartridge, `<media_dir>/<LABEL>/`. These are the files of partition 0 and
 * the cartridge's identity; a partitioned cartridge adds one index and data file per further
 * partition (api cartridge-image.ts, `imageFiles`), and a deterministic tar of exactly those
 * carries a cartridge whole (export and import).
 */
export const IMAGE_FILES = {
  meta: CARTRIDGE_BASE_FILES[0],
  mam: CARTRIDGE_BASE_FILES[1],
  index: CARTRIDGE_BASE_FILES[2],
  data: CARTRIDGE_BASE_FILES[3],
} as const;

/** Files an evicted stub keeps: the label and its identity, no tape content. */
export const STUB_FILES = [IMAGE_FILES.meta, IMAGE_FILES.mam] as const;

export { MAX_PARTITIONS, partitionFiles };

/** Every file of an image with `partitions` partitions. */
export function imageFiles(partitions = 1): string[] {
  return cartridgeImageFiles(partitions);
}

// The meta.json format is the api's (cartridge-image.ts), which offsite reads by too.
export { META_FORMAT, META_FORMAT_PARTITIONED, type CartridgeMeta };

/** Capacity of each partition in bytes. */
export function partitionCapacities(meta: CartridgeMeta): number[] {
  return meta.partitions && meta.partitions.length > 0 ? meta.partitions : [meta.capacity_bytes];
}

/** The meta with this partitioning: format 1 for one partition, format 2 for more. */
export function withPartitions(meta: CartridgeMeta, capacities: number[]): CartridgeMeta {
  const { partitions: _dropped, ...rest } = meta;
  if (capacities.length <= 1) return { ...rest, format: META_FORMAT };
  return { ...rest, format: META_FORMAT_PARTITIONED, partitions: [...capacities] };
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
  const parsed = parseCartridgeMeta(text);
  if (!parsed.ok) {
    const what = parsed.problem === 'not_json' ? 'is not valid JSON' : 'has an unknown format';
    throw new MediaError('corrupt', `${join(dir, IMAGE_FILES.meta)} ${what}`);
  }
  return parsed.meta;
}

export async function writeMeta(dir: string, meta: CartridgeMeta): Promise<void> {
  await writeFileAtomic(join(dir, IMAGE_FILES.meta), `${JSON.stringify(meta, null, 2)}\n`);
}
