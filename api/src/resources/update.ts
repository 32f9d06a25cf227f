import { z } from 'zod';

/**
 * One update as the detached updater records it (§2.20). `binary` and `prev_binary` are the
 * release directories switched between; `db_snapshot` is the store snapshot taken before the
 * switch. Paths are reported, never assumed by clients.
 */
/**
 * Who runs an update: the detached updater's pid, the kernel boot it runs in and the pid's start
 * time (so a reused pid is not mistaken for it), and when it last said it was alive. A pending
 * record whose updater is gone is settled at once by the apiserver (docs/updates.md).
 */
export const UpdaterIdentity = z.object({
  pid: z.number().int(),
  boot_id: z.string(),
  start_ticks: z.string(),
  heartbeat_at: z.string(),
});
export type UpdaterIdentity = z.infer<typeof UpdaterIdentity>;

/** A cartridge image left on a pool by a rollback: its record was created after the update. */
export const OrphanImage = z.object({ label: z.string(), library: z.number().int(), path: z.string() });
export type OrphanImage = z.infer<typeof OrphanImage>;

export const UpdateRecord = z.object({
  id: z.string(),
  from_version: z.string(),
  to_version: z.string(),
  binary: z.string(),
  prev_binary: z.string(),
  db_path: z.string(),
  db_snapshot: z.string(),
  attempt_limit: z.number().int(),
  staged_at: z.string(),
  deadline: z.string(),
  /** What the updater is doing: `update` or `rollback` (a manual one). */
  action: z.enum(['update', 'rollback']).default('update'),
  /** The updater's latest step, human-readable. */
  step: z.string().default(''),
  /** Health probes tried so far (≤ attempt_limit). */
  attempts: z.number().int().default(0),
  /** The updater's process id, for `unit`. */
  unit: z.string().default(''),
  /** The updater process that owns this record; null until it has started. */
  updater: UpdaterIdentity.nullable().default(null),
});
export type UpdateRecord = z.infer<typeof UpdateRecord>;

/** GET /api/system/update-status (§2.20). */
export const UpdateStatus = z.object({
  version: z.string(),
  build: z.string(),
  pending: UpdateRecord.nullable(),
  last_good: UpdateRecord.nullable(),
  /** How the last finished update or rollback ended, for the operator (null before any). */
  last_result: z
    .object({
      ok: z.boolean(),
      action: z.string(),
      version: z.string(),
      detail: z.string(),
      at: z.string(),
      /** A rollback's cartridge images whose records it dropped (created after the update). */
      orphan_images: z.array(OrphanImage).default([]),
    })
    .nullable(),
});
export type UpdateStatus = z.infer<typeof UpdateStatus>;

export const UpdateLastResult = UpdateStatus.shape.last_result.unwrap();
export type UpdateLastResult = z.infer<typeof UpdateLastResult>;

/** 202 of POST /api/system/update (§4.3). */
export const UpdateAccepted = z.object({
  from: z.string(),
  to: z.string(),
  built: z.string(),
  unit: z.string(),
  detail: z.string(),
});
export type UpdateAccepted = z.infer<typeof UpdateAccepted>;

/** 200 of POST /api/system/rollback (§4.3). */
export const RollbackAnswer = z.object({
  from: z.string(),
  to: z.string(),
  unit: z.string(),
  detail: z.string(),
  /**
   * Cartridges created since the update: the rollback drops their records, their images stay on
   * the pools (docs/updates.md says what to do with them).
   */
  orphaned_cartridges: z.array(z.string()).default([]),
});
export type RollbackAnswer = z.infer<typeof RollbackAnswer>;
