import { z } from 'zod';

/** keys.drain: a graceful restart waiting for jobs (§3.5). `deadline` is when it gives up. */
export const DrainState = z.object({
  draining: z.boolean(),
  since: z.string().optional(),
  deadline: z.string().optional(),
});
export type DrainState = z.infer<typeof DrainState>;

export const RestartMode = z.enum(['graceful', 'immediate']);

/**
 * keys.restartRequest: control-plane processes started before it exit and are restarted.
 * `resume_jobs` (the updater's restarts): running jobs are not interrupted but left in their
 * state, so the restarted nodeagent resumes them (an export from its chunk ledger); `reason`
 * says why, in the jobs' detail.
 */
export const RestartRequest = z.object({
  id: z.string(),
  requested_at: z.string(),
  mode: RestartMode,
  resume_jobs: z.boolean().optional(),
  reason: z.string().optional(),
});
export type RestartRequest = z.infer<typeof RestartRequest>;

/** §4.2 POST /api/system/restart */
export const RestartBody = z.strictObject({
  confirm: z.literal('restart', { error: 'confirm must be the word "restart"' }),
  mode: RestartMode.default('graceful'),
});
export const RestartResponse = z.object({
  ok: z.boolean(),
  detail: z.string(),
  draining: z.boolean().optional(),
  active_jobs: z.number().int().optional(),
});

/** §4.2 POST /api/system/reboot */
export const MaintenanceAnswer = z.object({ ok: z.boolean(), detail: z.string() });
