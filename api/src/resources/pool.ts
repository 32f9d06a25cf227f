import { z } from 'zod';
import { CONTROL_CHARS, displayText } from '../text.js';
import { ManagedBy } from './managed-by.js';
import { DedupStatus, PoolCompression } from './storage.js';

/** `directory`: a plain directory (the default); `btrfs`: a subvolume of the node's shared storage. */
export const PoolEngine = z.enum(['directory', 'btrfs']);
export type PoolEngine = z.infer<typeof PoolEngine>;

/** Desired pool: a directory on a named node. Written by the apiserver. */
export const PoolSpec = z.object({
  id: z.number().int().positive(),
  name: z.string(),
  node: z.string(),
  path: z.string(),
  created_at: z.string(),
  /** Absent: a directory pool (records written before shared storage existed). */
  engine: PoolEngine.optional(),
  /** btrfs pools: the compression of their subvolume (docs/storage.md). */
  compression: PoolCompression.optional(),
  /** The GitOps source that owns the pool (docs/gitops.md); absent when made through REST. */
  managed_by: ManagedBy.optional(),
});
export type PoolSpec = z.infer<typeof PoolSpec>;

export const PoolName = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9_-]{0,31}$/,
    'name: 1 to 32 lowercase letters, digits, - or _, starting with a letter or digit',
  );

export const CreatePoolRequest = z.strictObject({
  name: PoolName,
  node: displayText('node', 63).min(1).optional(),
  path: z
    .string()
    .min(1)
    .max(4096, 'path: at most 4096 characters')
    .refine((p) => !CONTROL_CHARS.test(p), 'path: control characters are not allowed')
    .refine((p) => p.startsWith('/'), 'path must be absolute')
    .optional(),
  /** Only for a pool on shared storage (no path): none, zstd (level 3) or zstd:1..15. */
  compression: PoolCompression.optional(),
});
export type CreatePoolRequest = z.infer<typeof CreatePoolRequest>;

/** Pool figures of the status view (§2.8). */
export const PoolFigures = z.object({
  name: z.string(),
  mountpoint: z.string(),
  fs_total_bytes: z.number().int(),
  fs_used_bytes: z.number().int(),
  logical_bytes: z.number().int(),
  dedup_ratio: z.number(),
  compress_ratio: z.number(),
  record_bytes: z.number().int(),
  phys_est_bytes: z.number().int(),
  zpool_size_bytes: z.number().int(),
  zpool_alloc_bytes: z.number().int(),
  collected_at: z.string(),
  /** Where the figures come from: a plain directory, or the btrfs engine (docs/storage.md). */
  engine: PoolEngine.optional(),
  /** btrfs pools: the node's dedup pass (state, progress, last run). */
  dedup: DedupStatus.optional(),
  // Older fields kept for shape stability (§2.8).
  vdo_logical_bytes: z.number().int(),
  vdo_physical_bytes: z.number().int(),
  vdo_saving_pct: z.number(),
});
export type PoolFigures = z.infer<typeof PoolFigures>;

export const PoolState = z.enum(['active', 'error']);
export type PoolState = z.infer<typeof PoolState>;

/** Observed pool: written by the nodeagent that owns the pool, under its lease. */
export const PoolStatus = z.object({
  id: z.number().int(),
  node: z.string(),
  state: PoolState,
  detail: z.string(),
  figures: PoolFigures.optional(),
});
export type PoolStatus = z.infer<typeof PoolStatus>;

/** Row of GET /api/pools. `state` is `offline` when no nodeagent reports the pool. */
export const PoolRow = PoolSpec.extend({
  state: z.enum(['active', 'error', 'offline']),
  detail: z.string(),
  library: z.number().int().nullable(),
  figures: PoolFigures.nullable(),
});
export type PoolRow = z.infer<typeof PoolRow>;
