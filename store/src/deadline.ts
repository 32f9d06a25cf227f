import { VtlError } from '@vtl/api';
import { GRPCCancelledError, GRPCDeadlineExceededError, GRPCUnavailableError, GRPCUnknownError } from 'etcd3';

/** How long one store call may take when nothing else is configured (VTL_STORE_DEADLINE_MS). */
export const DEFAULT_STORE_DEADLINE_MS = 5_000;

/** Seconds a client should wait before retrying after the store did not answer. */
export function retryAfterSec(deadlineMs: number): number {
  return Math.max(1, Math.ceil(deadlineMs / 1000));
}

/** The answer for "the store is unreachable or stalled": 503 unavailable with Retry-After. */
export function storeUnavailable(why: string, deadlineMs: number): VtlError {
  // No key names or addresses: 5xx bodies carry no internals (the store logs what it was doing).
  return new VtlError(
    'unavailable',
    `The store (etcd) ${why}. Retry shortly (after a change, re-read first: it may have taken effect); if this persists, check that etcd runs (GET /healthz names what is down).`,
    { retry_after_sec: retryAfterSec(deadlineMs), down: ['store'] },
  );
}

/**
 * What etcd answers when it could not complete a request in time rather than refusing it: its
 * context expired with our deadline while it waited for the leader (a frozen one), or it has no
 * leader for now. etcd3 casts these to GRPCUnknownError. "Received HTTP status code" is a
 * member that answered the HTTP/2 request without gRPC (etcd stopping or starting, its port
 * served but its gRPC server not): nothing was done, so another member is asked.
 */
const NOT_COMPLETED =
  /context deadline exceeded|request timed out|no leader|leader changed|Received HTTP status code/;

/** Errors that mean "etcd did not answer" rather than "etcd answered no". */
export function isUnreachable(err: unknown): boolean {
  return (
    err instanceof GRPCUnavailableError ||
    err instanceof GRPCDeadlineExceededError ||
    err instanceof GRPCCancelledError ||
    (err instanceof GRPCUnknownError && NOT_COMPLETED.test(err.message)) ||
    // cockatiel's open circuit after consecutive failures: etcd3 refuses calls for a few seconds.
    (typeof err === 'object' && err !== null && 'isBrokenCircuitError' in err)
  );
}

/**
 * Runs one store call under a deadline. A stalled etcd (SIGSTOP, a partition) keeps its TCP
 * connection open, so without this a call waits forever; the gRPC deadline of each attempt
 * (MemberPool) cancels the call itself, this timer bounds what the caller waits across its
 * attempts on several members.
 */
export async function withDeadline<T>(
  deadlineMs: number,
  fn: () => Promise<T>,
  onUnreachable?: (err: unknown) => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(storeUnavailable(`did not answer within ${deadlineMs} ms`, deadlineMs)),
      deadlineMs,
    );
  });
  try {
    return await Promise.race([fn(), expired]);
  } catch (err) {
    if (isUnreachable(err)) {
      onUnreachable?.(err);
      throw storeUnavailable('is unreachable', deadlineMs);
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** A store call's description for logs, with record ids cut off (a session key holds a token hash). */
export function coarse(what: string): string {
  return what.replace(/(\/vtl\/(?:[^/\s]+\/)*)[^/\s]+(?=\s|$)/g, '$1…');
}
