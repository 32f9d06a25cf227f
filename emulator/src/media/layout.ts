import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CARTRIDGE_BASE_FILES,
  LTO_GENERATIONS,
  MAX_PARTITIONS,
  cartridgeImageFiles,
  partitionFiles,
  type LtoGeneration,
} from '@vtl/api';
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

/** meta.json of a one-partition cartridge; older emulators read it too. */
export const META_FORMAT = 1;
/** meta.json of a partitioned cartridge: adds `partitions`. */
export const META_FORMAT_PARTITIONED = 2;

/** meta.json: what the cartridge is; rewritten atomically, never appended to. */
export interface CartridgeMeta {
  format: number;
  label: string;
  generation: number;
  /** SCSI density code of the generation (api LTO_GENERATIONS). */
  density: number;
  capacity_bytes: number;
  /**
   * Format 2: the capacity of each partition in bytes, partition 0 first (their sum is at most
   * capacity_bytes). Absent in format 1: one partition of capacity_bytes.
   */
  partitions?: number[];
  write_protected: boolean;
  /** A WORM cartridge (media identifier LT..LZ): data once written stays; appending is allowed. */
  worm?: boolean;
  /**
   * The drive wrote encrypted blocks on it (SSC-4 VCELB: volume contains encrypted logical
   * blocks); set by the first one, cleared when the cartridge is formatted. Never any key.
   */
  encrypted_data?: boolean;
  /** Evicted: data and index were deleted after a verified bucket copy. */
  stub: boolean;
  created: string;
}

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
  let meta: CartridgeMeta;
  try {
    meta = JSON.parse(text) as CartridgeMeta;
  } catch {
    throw new MediaError('corrupt', `${join(dir, IMAGE_FILES.meta)} is not valid JSON`);
  }
  const partitionsOk =
    meta.format === META_FORMAT
      ? meta.partitions === undefined
      : Array.isArray(meta.partitions) &&
        meta.partitions.length >= 1 &&
        meta.partitions.length <= MAX_PARTITIONS &&
        meta.partitions.every((n) => Number.isSafeInteger(n) && n >= 0);
  if (
    (meta.format !== META_FORMAT && meta.format !== META_FORMAT_PARTITIONED) ||
    !partitionsOk ||
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
