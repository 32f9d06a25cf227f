import { z } from 'zod';

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lower-case hex SHA-256');
const Count = z.number().int().nonnegative();

/** One verified chunk; the caller persists the array (etcd) after every onChunk. */
export const LedgerEntry = z.object({
  /** Chunk counter from 0. */
  n: Count,
  /** Full bucket key of the chunk object. */
  key: z.string(),
  /** Where the chunk starts in the tar stream. */
  raw_offset: Count,
  /** Tar bytes in the chunk (chunk_bytes, less for the last). */
  raw_bytes: Count,
  /** Size of the stored (zstd) object. */
  stored_bytes: Count,
  /** SHA-256 of the stored object, as uploaded and as S3 checked it on receipt. */
  sha256: Sha256,
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

export const MANIFEST_FORMAT = 1;

/** manifest.json, written last in a generation folder: its presence marks the copy complete. */
export const Manifest = z.object({
  format: z.literal(MANIFEST_FORMAT),
  system: z.string(),
  library_serial: z.string(),
  label: z.string(),
  generation: z.string(),
  created_at: z.string(),
  /** The cartridge's size_bytes (what the host wrote). */
  logical_bytes: Count,
  /** Length of the uncompressed tar stream. */
  tar_bytes: Count,
  /**
   * SHA-256 of the chunks' sha256 values, each as lower-case hex followed by '\n': one hash
   * that fixes the whole stored generation. The tar bytes inside each chunk are checked on
   * import by zstd's frame checksum and the chunk's raw_bytes.
   */
  chunks_sha256: Sha256,
  /** Sum of the stored chunk objects. */
  stored_bytes: Count,
  /** Tar bytes per chunk; every chunk but the last holds exactly this many. */
  chunk_bytes: z.number().int().positive(),
  compression: z.literal('zstd'),
  chunks: z.array(LedgerEntry),
  cartridge: z.object({
    /** LTO generation (3..9). */
    generation: z.number().int(),
    density: z.number().int(),
    capacity_bytes: Count,
    write_protected: z.boolean(),
  }),
});
export type Manifest = z.infer<typeof Manifest>;

export const TOPOLOGY_FORMAT = 1;

/**
 * <prefix>/<system>/<serial>/topology.json: enough to declare the library again on recovery.
 * Extra fields are kept, so a newer writer's additions survive a read-modify-write.
 */
export const Topology = z.looseObject({
  format: z.literal(TOPOLOGY_FORMAT).default(TOPOLOGY_FORMAT),
  system: z.string(),
  library_serial: z.string(),
  name: z.string(),
  product: z.string(),
  vendor: z.string(),
  drive_product: z.string(),
  num_drives: Count,
  num_slots: Count,
  num_map: Count,
  label_prefix: z.string(),
  written_at: z.string(),
  cartridges: z.array(z.object({ label: z.string(), home_slot: Count })),
});
export type Topology = z.infer<typeof Topology>;

export const SYSTEM_FILE_FORMAT = 1;

/** <prefix>/<system>/.vtl-system.json: which appliance owns this system folder. */
export const SystemFile = z.looseObject({
  format: z.literal(SYSTEM_FILE_FORMAT).default(SYSTEM_FILE_FORMAT),
  system: z.string(),
  uuid: z.string(),
  version: z.string(),
  written_at: z.string(),
});
export type SystemFile = z.infer<typeof SystemFile>;
