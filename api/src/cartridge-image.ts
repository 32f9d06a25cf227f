/**
 * The files of a cartridge image directory, shared by the emulator (which writes them) and
 * offsite (whose deterministic tar carries exactly these, in this order). Partition 0 keeps the
 * names single-partition images always had; partition n > 0 of a partitioned cartridge (LTO-5
 * and later, meta.json format 2) adds `index.p<n>` and `data.p<n>`.
 */
export const CARTRIDGE_BASE_FILES = ['meta.json', 'mam.json', 'index', 'data'] as const;

/** Partitions a cartridge may have: LTO-7 and later drives make up to four. */
export const MAX_PARTITIONS = 4;

/** The block index and data file names of one partition. */
export function partitionFiles(partition: number): { index: string; data: string } {
  if (partition === 0) return { index: 'index', data: 'data' };
  return { index: `index.p${partition}`, data: `data.p${partition}` };
}

/** Every file of an image with this many partitions, in tar order. */
export function cartridgeImageFiles(partitions = 1): string[] {
  const extra: string[] = [];
  for (let p = 1; p < partitions; p++) {
    const f = partitionFiles(p);
    extra.push(f.index, f.data);
  }
  return [...CARTRIDGE_BASE_FILES, ...extra];
}

/** Whether a name is one an image may hold (of any partition count). */
export function isCartridgeImageFile(name: string): boolean {
  return cartridgeImageFiles(MAX_PARTITIONS).includes(name);
}

/** Partition count a meta.json object declares: its `partitions` list, or one. */
export function metaPartitionCount(meta: { partitions?: unknown }): number {
  return Array.isArray(meta.partitions) && meta.partitions.length > 0 ? meta.partitions.length : 1;
}

/** The name of the identity file every image has. */
export const CARTRIDGE_META_FILE = CARTRIDGE_BASE_FILES[0];

/** meta.json of a one-partition cartridge; older emulators read it too. */
export const META_FORMAT = 1;
/** meta.json of a partitioned cartridge: adds `partitions`. */
export const META_FORMAT_PARTITIONED = 2;

/**
 * meta.json: what the cartridge is. The emulator writes it (atomically, never appended to);
 * offsite reads it to pick the files its tar carries and repeats its identity in the manifest.
 */
export interface CartridgeMeta {
  format: number;
  label: string;
  generation: number;
  /** SCSI density code of the generation (LTO_GENERATIONS). */
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

/** Why a meta.json text is not a cartridge's: not JSON, or not a format this code knows. */
export type CartridgeMetaProblem = 'not_json' | 'unknown_format';

/** The meta in a meta.json text, or what is wrong with it. */
export function parseCartridgeMeta(
  text: string,
): { ok: true; meta: CartridgeMeta } | { ok: false; problem: CartridgeMetaProblem } {
  let meta: CartridgeMeta;
  try {
    meta = JSON.parse(text) as CartridgeMeta;
  } catch {
    return { ok: false, problem: 'not_json' };
  }
  if (typeof meta !== 'object' || meta === null) return { ok: false, problem: 'unknown_format' };
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
    return { ok: false, problem: 'unknown_format' };
  }
  return { ok: true, meta };
}

/**
 * Every file of the image whose meta.json text this is, in tar order; the base files when the
 * text is not JSON (the tar then fails on its own check of meta.json).
 */
export function cartridgeFilesOfMeta(metaText: string): string[] {
  let meta: { partitions?: unknown };
  try {
    meta = JSON.parse(metaText) as { partitions?: unknown };
  } catch {
    return [...CARTRIDGE_BASE_FILES];
  }
  return cartridgeImageFiles(Math.min(MAX_PARTITIONS, metaPartitionCount(meta ?? {})));
}
