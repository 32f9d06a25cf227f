import { z } from 'zod';

/** §2.19 journal record; `data` carries the kind-specific payload the stream sends. */
export const EventRecord = z.object({
  id: z.number().int(),
  ts: z.string(),
  kind: z.string(),
  subject: z.string(),
  detail: z.string(),
  data: z.record(z.string(), z.unknown()).default({}),
});
export type EventRecord = z.infer<typeof EventRecord>;

/** The journal keeps this many newest events; older ones are trimmed as new ones arrive. */
export const EVENT_JOURNAL_BOUND = 10_000;

export const EventSeverity = z
  .enum(['info', 'warning', 'error'])
  .describe(
    'error: something failed (a job, an activation, an update, a mount); warning: needs a look (cancelled, refused in part, drift corrected, a lockout); info: the rest, unknown kinds included',
  );
export type EventSeverity = z.infer<typeof EventSeverity>;

/** A journal event as the lists answer it: the record less its payload, with its severity. */
export const Event = EventRecord.omit({ data: true }).extend({ severity: EventSeverity });
export type Event = z.infer<typeof Event>;

/** Kinds whose every event is an error or a warning, whatever their payload. */
const KIND_SEVERITY: Record<string, EventSeverity> = {
  emu_media_error: 'error',
  gitops_apply_failed: 'error',
  gitops_revision_invalid: 'error',
  system: 'warning', // a graceful restart abandoned (§6.2)
  emu_chap_lockout: 'warning',
  gitops_drift_corrected: 'warning',
  update_orphan_images: 'warning',
};

/** Kinds whose payload says whether what they report worked (`data.ok`); a failure is an error. */
const OUTCOME_KINDS = new Set(['maint_done', 'update_done', 'update_taken_over']);

/**
 * The severity of a journal event, from its kind and payload (the emitters' `data`): one rule
 * for every reader (the lists, the live stream), so the console and clients need not guess from
 * the words of the detail. The spec treats unknown kinds as informational.
 */
export function eventSeverity(e: Pick<EventRecord, 'kind' | 'data'>): EventSeverity {
  const fixed = KIND_SEVERITY[e.kind];
  if (fixed) return fixed;
  const { data } = e;
  if (OUTCOME_KINDS.has(e.kind)) return data.ok === false ? 'error' : 'info';
  switch (e.kind) {
    case 'job_update':
      return data.state === 'failed' ? 'error' : data.state === 'cancelled' ? 'warning' : 'info';
    case 'gitops_applied': // partly applied: the rest waits for the next sync
      return data.ok === false ? 'warning' : 'info';
    case 'fc_state': // unverified on a node with HBAs; a node without any is as it should be
      return data.verified === false && data.no_hba !== true ? 'warning' : 'info';
    default:
      return 'info';
  }
}

/** The list form of a journal record (GET /api/events/recent and /search). */
export function eventView(e: EventRecord): Event {
  return {
    id: e.id,
    ts: e.ts,
    kind: e.kind,
    subject: e.subject,
    detail: e.detail,
    severity: eventSeverity(e),
  };
}

export const NewEvent = z.object({
  kind: z.string(),
  subject: z.string(),
  detail: z.string().default(''),
  data: z.record(z.string(), z.unknown()).default({}),
});
export type NewEvent = z.input<typeof NewEvent>;
