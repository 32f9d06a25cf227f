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
