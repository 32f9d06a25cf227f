/*
 * The store deadline setting alone, without the etcd client: the appliance launcher reads it
 * for its children and never talks to etcd itself (store/src/settings.ts).
 */

/** How long one store call may take when nothing else is configured (VTL_STORE_DEADLINE_MS). */
export const DEFAULT_STORE_DEADLINE_MS = 5_000;

/** The store deadline from a process's environment (its config.ts): VTL_STORE_DEADLINE_MS, else the default. */
export function storeDeadlineFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.VTL_STORE_DEADLINE_MS;
  if (raw === undefined || raw === '') return DEFAULT_STORE_DEADLINE_MS;
  const n = Number.parseInt(raw, 10);
  if (!Number.isInteger(n) || n <= 0)
    throw new Error(`VTL_STORE_DEADLINE_MS: expected a positive integer of milliseconds, got "${raw}"`);
  return n;
}
