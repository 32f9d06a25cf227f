/**
 * Stable error codes. The apiserver maps each to its HTTP status in one place; every
 * process raises these instead of ad-hoc strings. This module loads no schema library, so a
 * process that validates nothing with zod (the launcher, the emulator) can raise and read these
 * errors without it (error-schema.ts holds the zod schemas of the same codes and body).
 */
export const ERROR_CODES = [
  'bad_request',
  'validation_failed',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'conflict',
  'draining',
  'precondition_failed',
  'rate_limited',
  'timeout',
  'internal',
  'unavailable',
  'payload_too_large',
  'uri_too_long',
  'unsupported_media_type',
  'headers_too_large',
  /** An S3 remote refused the connection or answered with an error (access, bucket, 5xx). */
  'remote_refused',
  /** An S3 remote did not answer in time (timeout, host or network unreachable). */
  'remote_unreachable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);
export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === 'string' && KNOWN_CODES.has(value);

export const statusForCode: Record<ErrorCode, number> = {
  bad_request: 400,
  validation_failed: 400,
  precondition_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  draining: 409,
  rate_limited: 429,
  internal: 500,
  timeout: 504,
  unavailable: 503,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  headers_too_large: 431,
  remote_refused: 502,
  remote_unreachable: 504,
};

/** The one error body of every 4xx/5xx response (docs/errors.md); its schema: error-schema.ts. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

/** An error that carries a stable code, a message saying what to do, and optional details. */
export class VtlError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'VtlError';
  }

  get status(): number {
    return statusForCode[this.code];
  }

  toBody(): ErrorBody {
    return {
      error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) },
    };
  }

  static fromBody(body: ErrorBody['error']): VtlError {
    return new VtlError(body.code, body.message, body.details);
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new VtlError('bad_request', message, details);
export const notFound = (message: string) => new VtlError('not_found', message);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new VtlError('conflict', message, details);
