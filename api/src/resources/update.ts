import { z } from 'zod';

/**
 * One update as the detached updater records it (§2.20). `binary` and `prev_binary` are the
 * release directories switched between; `db_snapshot` is the store snapshot taken before the
 * switch. Paths are reported, never assumed by clients.
 */
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
    .object({ ok: z.boolean(), action: z.string(), version: z.string(), detail: z.string(), at: z.string() })
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

/** 200 of POST /api/system/rollback (§4.3). */
export const RollbackAnswer = z.object({
  from: z.string(),
  to: z.string(),
  unit: z.string(),
  detail: z.string(),
});
