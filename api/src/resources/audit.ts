import { z } from 'zod';

/** Who asked: a user (by name), an API key (by id and name), or nobody known. */
export const AuditActor = z.object({
  kind: z.enum(['user', 'apikey', 'service', 'anonymous']),
  name: z.string(),
});

export const AuditOutcome = z.enum(['ok', 'refused', 'failed']);

/**
 * One audit entry: who asked for what, and how it ended. It never holds request bodies, so no
 * password, key, token or S3 secret can end up here.
 */
export const AuditEntry = z.object({
  id: z.number().int(),
  ts: z.string(),
  actor: AuditActor,
  action: z.string(),
  subject: z.string(),
  outcome: AuditOutcome,
  status: z.number().int(),
  method: z.string(),
  route: z.string(),
  request_id: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

/** The audit log keeps this many newest entries; older ones are trimmed as new ones arrive. */
export const AUDIT_LOG_BOUND = 10_000;

export const AuditQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  /** Paging cursor: entries with a smaller id than this (the `next_before` of the previous page). */
  before: z.coerce.number().int().min(1).optional(),
});
export const AuditPage = z.object({
  entries: z.array(AuditEntry),
  /** Pass as `before` for the next (older) page; null on the last page. */
  next_before: z.number().int().nullable(),
});
