import { z } from 'zod';

export const JobKind = z.enum(['export', 'evict', 'import']);
export type JobKind = z.infer<typeof JobKind>;

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

export const Job = z.object({
  id: z.number().int(),
  kind: JobKind,
  state: JobState,
  label: z.string(),
  library: z.number().int(),
  remote_id: z.number().int(),
  generation: z.string(),
  bytes_done: z.number().int(),
  chunks_done: z.number().int(),
  detail: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Job = z.infer<typeof Job>;
