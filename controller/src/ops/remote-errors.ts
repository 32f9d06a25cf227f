import { VtlError } from '@vtl/api';
// The error class alone: the package index would load the S3 client at start (offsite-module.ts).
import { OffsiteError } from '@vtl/offsite/errors';

/** Socket codes of "nobody answered in time": the remote may be up behind a slow or cut path. */
const NO_ANSWER = new Set(['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);
const TIMEOUT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);

interface ErrorShape {
  name?: string;
  code?: string;
  message?: string;
  cause?: unknown;
  errors?: unknown[];
}

/** Whether anything in an error chain says "timed out" or "unreachable network". */
function noAnswer(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 6) return false;
  const e = err as ErrorShape;
  if ((e.code && NO_ANSWER.has(e.code)) || (e.name && TIMEOUT_NAMES.has(e.name))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => noAnswer(inner, depth + 1))) return true;
  return noAnswer(e.cause, depth + 1);
}

/**
 * An S3 failure of a remote operation as the API answers it: 504 remote_unreachable
 * when the remote did not answer in time, 502 remote_refused when it refused the connection or
 * answered with an error; the message names the operation and the endpoint. Input errors of the
 * engine are 400; anything else is not an S3 failure and passes through.
 */
export function remoteFailure(err: unknown, what: string, endpoint: string): unknown {
  if (err instanceof VtlError) return err;
  const details = { endpoint };
  if (err instanceof OffsiteError) {
    if (err.code === 'invalid') return new VtlError('bad_request', err.message);
    if (err.code === 'aborted') return err;
    if (err.code === 'unreachable' && noAnswer(err))
      return new VtlError(
        'remote_unreachable',
        `${what}: the remote at ${endpoint} did not answer in time (${err.message}). Check the network path and that the S3 service runs, then retry.`,
        details,
      );
    return new VtlError(
      'remote_refused',
      `${what}: the remote at ${endpoint} refused (${err.message}). Check the remote's endpoint, bucket and keys (POST /api/remotes/{id}/test), then retry.`,
      details,
    );
  }
  // The engine leaves an S3 answer none of its codes fits as a plain Error naming the S3 error.
  if (err instanceof Error && (err as ErrorShape).cause && /failed at /.test(err.message))
    return new VtlError('remote_refused', `${what}: ${err.message}`, details);
  return err;
}
