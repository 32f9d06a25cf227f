import { z } from 'zod';
import { TEXT_LIMITS, plainText } from '../text.js';

export const JobKind = z.enum(['export', 'evict', 'import']);
export type JobKind = z.infer<typeof JobKind>;

/**
 * Job states (docs/api.md "Jobs"). export: detected → quiescing → uploading → succeeded.
 * evict: queued → verifying → succeeded. import: queued → downloading → succeeded. Any
 * non-terminal state can end in failed (retryable), interrupted (control-plane restart or
 * reboot; retryable) or, before work started, cancelled.
 */
export const JobState = z.enum([
  'detected',
  'queued',
  'quiescing',
  'uploading',
  'verifying',
  'downloading',
  'succeeded',
  'failed',
  'interrupted',
  'cancelled',
]);
export type JobState = z.infer<typeof JobState>;

export const TERMINAL_JOB_STATES: readonly JobState[] = ['succeeded', 'failed', 'cancelled'];
/** Jobs in these states count as "active or queued" for the refusals of §4.6 and §7. */
export const isJobActive = (state: JobState) =>
  !TERMINAL_JOB_STATES.includes(state) && state !== 'interrupted';
/** States in which the nodeagent that owns the cartridge moves data. */
export const EXECUTING_JOB_STATES: readonly JobState[] = [
  'quiescing',
  'uploading',
  'verifying',
  'downloading',
];
/** States a job can be retried from. */
export const RETRYABLE_JOB_STATES: readonly JobState[] = ['failed', 'interrupted'];
/** States a job can be cancelled from: nothing moves (not started yet, interrupted or failed). */
export const CANCELLABLE_JOB_STATES: readonly JobState[] = ['detected', 'queued', 'interrupted', 'failed'];
/**
 * A job in any state but these still references its cartridge (§3.2, §4.5 rule 2): it runs, waits
 * or can be retried. Deleting the cartridge waits until every such job succeeded or was cancelled.
 */
export const jobReferencesCartridge = (state: JobState) => state !== 'succeeded' && state !== 'cancelled';

/** Bucket generation names, `YYYYMMDDTHHMMSSZ` (§2.17). */
export const GENERATION_PATTERN = /^\d{8}T\d{6}Z$/;

/** A generation name for `at` (default now), e.g. 20260115T093000Z. */
export function newGeneration(at: Date = new Date()): string {
  return at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}
const generation = z
  .string()
  .trim()
  .regex(GENERATION_PATTERN, 'generation must have the form YYYYMMDDTHHMMSSZ, e.g. 20260101T120000Z');

/** The job row (§2.17 names id, kind, state, bytes_done, chunks_done; the rest is docs/api.md). */
export const Job = z.object({
  id: z.number().int(),
  kind: JobKind,
  state: JobState,
  label: z.string(),
  /** Library the cartridge is in (import into a library: the target library). */
  library: z.number().int(),
  remote_id: z.number().int(),
  generation: z.string(),
  /** First segment of the bucket keys: this appliance's name, or the exporter's on import. */
  system_name: z.string().default(''),
  library_serial: z.string().default(''),
  /** Import into a library via its I/E slot; 0 = same-system swap-in of an evicted stub. */
  target_library: z.number().int().default(0),
  /** Import into a library: the storage slot to put the cartridge in (recovery), else an I/E slot. */
  home_slot: z.number().int().default(0),
  /** Node whose nodeagent moves the data (owner of the library's pool). */
  node: z.string().default(''),
  bytes_done: z.number().int(),
  chunks_done: z.number().int(),
  /** Logical size of the cartridge image (export: size_bytes; import: the manifest's). */
  logical_bytes: z.number().int().default(0),
  /** Compressed bytes in the bucket, known once a manifest exists. */
  stored_bytes: z.number().int().default(0),
  /** What is happening now, for people. */
  detail: z.string(),
  /** Why the job failed or was interrupted; empty otherwise. */
  error: z.string().default(''),
  /** Times the job was started (1 + retries). */
  attempts: z.number().int().default(1),
  requested_by: z.string().default(''),
  created_at: z.string(),
  updated_at: z.string(),
  started_at: z.string().default(''),
  finished_at: z.string().default(''),
});
export type Job = z.infer<typeof Job>;
/** A job row as written: fields with defaults may be left out. */
export type JobInput = z.input<typeof Job>;

/** Chunks an export verified, persisted after each one (keys.jobLedger) so a restart resumes. */
export const JobLedger = z.object({
  job: z.number().int(),
  /** Chunk size of the first attempt: a resumed export must cut the tar the same way. */
  chunk_bytes: z.number().int().positive().optional(),
  entries: z.array(
    z.object({
      n: z.number().int(),
      key: z.string(),
      raw_offset: z.number().int(),
      raw_bytes: z.number().int(),
      stored_bytes: z.number().int(),
      sha256: z.string(),
    }),
  ),
});
export type JobLedger = z.infer<typeof JobLedger>;

export const ExportRequest = z.strictObject({
  remote_id: z.number().int().positive(),
  generation: generation.optional().describe('omitted = a new generation named after now'),
});
export const EvictRequest = z.strictObject({
  remote_id: z.number().int().positive(),
  generation: generation.optional().describe("omitted = the cartridge's last_export_gen"),
});
export const ImportRequest = z.strictObject({
  remote_id: z.number().int().positive(),
  generation,
  system_name: plainText('system_name', TEXT_LIMITS.name).optional(),
  target_library: z.number().int().positive().optional(),
});

/** GET /api/jobs filters. */
export const JobListQuery = z.object({
  state: z.string().optional().describe('comma-separated states'),
  kind: z.string().optional().describe('comma-separated kinds'),
  label: z.string().optional(),
  remote_id: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(500),
});

/** keys.jobBoot: the host boot a node's jobs last ran under. */
export const JobBoot = z.object({ boot_id: z.string() });

/** `requested_by` of jobs the appliance's own policies create (§2.13). */
export const POLICY_REQUESTERS = {
  ieWatcher: 'policy:export.ie_watcher',
  evictThreshold: 'policy:evict.threshold_pct',
} as const;
