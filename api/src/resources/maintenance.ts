import { z } from 'zod';

/** keys.drain: a graceful restart waiting for jobs (§3.5). `deadline` is when it gives up. */
export const DrainState = z.object({
  draining: z.boolean(),
  since: z.string().optional(),
  deadline: z.string().optional(),
});
export type DrainState = z.infer<typeof DrainState>;

export const RestartMode = z.enum(['graceful', 'immediate']);

/** keys.restartRequest: control-plane processes started before it exit and are restarted. */
export const RestartRequest = z.object({ id: z.string(), requested_at: z.string(), mode: RestartMode });
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
