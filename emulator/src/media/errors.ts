/**
 * Why a cartridge image refused an operation. The SSC drive maps each reason to sense data
 * (e.g. `write_protected` → DATA PROTECT, `end_of_medium` → VOLUME OVERFLOW, `stub` and
 * `corrupt` → MEDIUM ERROR), so the reasons are a stable contract, not free text.
 */
export type MediaErrorReason =
  | 'not_found'
  | 'exists'
  | 'stub'
  | 'write_protected'
  /** A WORM cartridge: written data cannot be overwritten, erased or reformatted. */
  | 'worm_overwrite'
  | 'end_of_medium'
  | 'corrupt'
  | 'closed'
  | 'invalid';

export class MediaError extends Error {
  constructor(
    readonly reason: MediaErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'MediaError';
  }
}

export function isMediaError(err: unknown, reason?: MediaErrorReason): err is MediaError {
  return err instanceof MediaError && (reason === undefined || err.reason === reason);
}

/** True for a Node fs error with this errno code (ENOENT, EEXIST, ...). */
export function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
