import { VtlError, type Op } from '@vtl/api';
import type { RemoteConnection } from '@vtl/offsite';
import { remoteFailure } from './remote-errors.js';

/**
 * The default overall deadline of one whole remote operation (a listing with all its pages, a
 * folder deletion, a catalog scan with every manifest, a probe): without it the SDK's own
 * retries let one call hang for 3 × 60 s. The apiserver passes VTL_REMOTE_DEADLINE_MS in the
 * op's `deadline_ms`.
 */
export const DEFAULT_REMOTE_DEADLINE_MS = 30_000;

/** "http(s)://host:port" of a remote, for messages. */
export const endpointOf = (c: Pick<RemoteConnection, 'use_ssl' | 'endpoint'>) =>
  `${c.use_ssl ? 'https' : 'http'}://${c.endpoint}`;

/** The deadline an op asks for (params.deadline_ms), else the default. */
export function deadlineOf(op: Op): number {
  const asked = Number(op.params.deadline_ms);
  return Number.isInteger(asked) && asked > 0 ? asked : DEFAULT_REMOTE_DEADLINE_MS;
}

/** The 504 of a remote operation that ran past its deadline, naming the endpoint. */
export function deadlineExceeded(what: string, endpoint: string, deadlineMs: number): VtlError {
  return new VtlError(
    'remote_unreachable',
    `${what}: the remote at ${endpoint} did not finish within ${Math.round(deadlineMs / 1000)} s (VTL_REMOTE_DEADLINE_MS). Check the network path and that the S3 service runs, then retry.`,
    { endpoint },
  );
}

/**
 * Runs one whole S3 operation under an overall deadline: its AbortSignal fires at the deadline
 * (ending the SDK's requests and retries), and the answer is 504 remote_unreachable naming the
 * endpoint; other failures are 502 remote_refused / 504 remote_unreachable as remoteFailure says.
 */
export async function remoteCall<T>(
  what: string,
  conn: RemoteConnection,
  deadlineMs: number,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const endpoint = endpointOf(conn);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  // The race also answers when a call ignores the signal (a hung socket the SDK does not watch).
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new Error('deadline'));
      reject(deadlineExceeded(what, endpoint, deadlineMs));
    }, deadlineMs);
  });
  try {
    return await Promise.race([fn(controller.signal), deadline]);
  } catch (err) {
    if (controller.signal.aborted) throw deadlineExceeded(what, endpoint, deadlineMs);
    throw remoteFailure(err, what, endpoint);
  } finally {
    clearTimeout(timer);
  }
}
