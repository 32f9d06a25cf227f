import type { Op } from '@vtl/api';
import { submitOp, type SubmitOp } from '@vtl/domain';
import type { Store } from '@vtl/store';
import { awaitOpResult as awaitOpOutcome, type AwaitOpOptions } from '@vtl/reconcile';

/** A route's answer when its op outlasts the wait: the op goes on, so the client watches, not retries. */
export const stillRunning = (id: number, last: Op | undefined): string =>
  `Operation ${id} (${last?.kind ?? 'unknown'}) is still ${last?.state ?? 'pending'}; it goes on: watch GET /api/events or poll GET /api/status instead of retrying.`;

const routeWait = (timeoutMs: number): AwaitOpOptions => ({ timeoutMs, timeoutMessage: stillRunning });

/**
 * Submits an operation and waits for it (awaitOpResult of @vtl/reconcile: a store outage is waited
 * out; a failed op throws its executor's error with the op's steps; past the wait a 504 names the
 * op). Returns the op's result.
 */
export async function runOp<T>(store: Store, req: SubmitOp, timeoutMs: number): Promise<T> {
  return awaitOpResult<T>(store, await submitOp(store, req), timeoutMs);
}

/** Waits for a submitted operation as a route does; its result, or the executor's error thrown. */
export async function awaitOpResult<T>(store: Store, id: number, timeoutMs: number): Promise<T> {
  return awaitOpOutcome<T>(store, id, routeWait(timeoutMs));
}
