import { VtlError } from '@vtl/api';

/**
 * Whether a job step failed only because the store (etcd) did not answer in time: a member
 * stopping, a leader election, a stall. The step is then run again rather than the job failed:
 * every step resumes from what is recorded (an export from its chunk ledger), as after a
 * nodeagent restart, and a job record cannot be marked failed while the store is away anyway.
 * The store's deadline error may arrive wrapped (as the `cause` of an offsite engine error).
 */
export function isStoreBlip(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    if (e instanceof VtlError && e.code === 'unavailable') {
      const down = e.details?.down;
      if (Array.isArray(down) && down.includes('store')) return true;
    }
    e = e instanceof Error ? e.cause : undefined;
  }
  return false;
}
