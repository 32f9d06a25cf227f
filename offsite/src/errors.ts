/**
 * Stable codes of the engine's errors; callers branch on these, never on messages.
 * - unreachable: the endpoint did not answer (connection refused, timeout, DNS): retry later.
 * - access_denied: the keys were refused (wrong access key or secret, no permission).
 * - not_found: the bucket, generation or object is not there.
 * - verify_failed: a chunk or manifest does not match what was recorded; names the object.
 * - aborted: the caller's AbortSignal fired.
 * - stub: the cartridge is an evicted stub with no data to export.
 * - invalid: bad input (a folder without a trailing '/', a ledger that does not fit, a
 *   staging directory that is not empty, a cartridge directory missing a file).
 */
export type OffsiteErrorCode =
  'unreachable' | 'access_denied' | 'not_found' | 'verify_failed' | 'aborted' | 'stub' | 'invalid';

/** An error of the offsite engine with a stable `code` and a message that says what to do. */
export class OffsiteError extends Error {
  constructor(
    readonly code: OffsiteErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OffsiteError';
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);
const DENIED_CODES = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'Forbidden',
  'InvalidToken',
  'ExpiredToken',
]);

interface SdkErrorShape {
  name?: string;
  code?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  cause?: unknown;
}

/** The innermost errno-like code (ECONNREFUSED…) of an error chain, if any. */
function networkCode(err: unknown): string | undefined {
  for (let e = err as SdkErrorShape | undefined, depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return e.code;
    const agg = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(agg)) for (const inner of agg) if (networkCode(inner)) return networkCode(inner);
    e = e.cause as SdkErrorShape | undefined;
  }
  return undefined;
}

/**
 * Turns an S3 SDK or socket error into an OffsiteError saying what failed (`what`, e.g.
 * "upload of chunk-00003.tar.zst") and what to do next. An OffsiteError passes through;
 * an answer none of the codes fits stays a plain Error naming the S3 error.
 */
export function toOffsiteError(err: unknown, what: string, where: string): Error {
  if (err instanceof OffsiteError) return err;
  const e = (err ?? {}) as SdkErrorShape;
  const name = e.name ?? '';
  const status = e.$metadata?.httpStatusCode;
  const message = e.message || name || String(err);
  if (name === 'AbortError' || name === 'AbortedError') {
    return new OffsiteError('aborted', `${what} was aborted`, { cause: err });
  }
  const net = networkCode(err);
  if (
    net ||
    name === 'TimeoutError' ||
    name === 'RequestTimeout' ||
    /socket hang up|timed? ?out/i.test(message)
  ) {
    return new OffsiteError(
      'unreachable',
      `${what} failed: ${where} is unreachable (${net ?? message}); check the endpoint and that the S3 service is running, then retry`,
      { cause: err },
    );
  }
  if (DENIED_CODES.has(name) || status === 403) {
    return new OffsiteError(
      'access_denied',
      `${what} failed: ${where} refused the credentials (${name || status}); check the access key, secret key and bucket permissions`,
      { cause: err },
    );
  }
  if (name === 'NoSuchBucket') {
    return new OffsiteError(
      'not_found',
      `${what} failed: ${where} does not exist; create the bucket or fix the remote's bucket name`,
      {
        cause: err,
      },
    );
  }
  if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) {
    return new OffsiteError('not_found', `${what} failed: not found at ${where}`, { cause: err });
  }
  if (status !== undefined && status >= 500) {
    return new OffsiteError(
      'unreachable',
      `${what} failed: ${where} answered ${status} ${name}: ${message}; retry later`,
      {
        cause: err,
      },
    );
  }
  return new Error(`${what} failed at ${where}: ${name ? `${name}: ` : ''}${message}`, { cause: err });
}

/** Throws an 'aborted' OffsiteError when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new OffsiteError('aborted', `${what} was aborted`, { cause: signal.reason });
}

/** Whether a raw SDK error says the object (not the bucket) does not exist. */
export function isMissingObject(err: unknown): boolean {
  const e = (err ?? {}) as SdkErrorShape;
  if (e.name === 'NoSuchBucket') return false;
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}
