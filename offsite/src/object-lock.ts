import { createHash } from 'node:crypto';
import { GetObjectLockConfigurationCommand, type S3Client } from '@aws-sdk/client-s3';
import { toOffsiteError } from './errors.js';
import { describeRemote, type RemoteConnection } from './remote.js';

/** Retention a WORM cartridge's copy is written with (S3 Object Lock). */
export interface ObjectLock {
  mode: 'COMPLIANCE' | 'GOVERNANCE';
  retainUntil: Date;
}

/** Without a default rule on the bucket: a WORM copy stays as long as the data on a tape might. */
export const DEFAULT_WORM_RETENTION_DAYS = 3650;
const DAY_MS = 86_400_000;

function statusOf(err: unknown): { name?: string; code?: number } {
  const e = err as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  return { name: e?.name ?? e?.Code, code: e?.$metadata?.httpStatusCode };
}

/**
 * The retention for the copies of a WORM cartridge, when the bucket was created with Object
 * Lock enabled (S3 allows it on no other): the bucket's default rule (its mode and period) if it
 * has one, COMPLIANCE for DEFAULT_WORM_RETENTION_DAYS otherwise. Undefined when the bucket has
 * no Object Lock or the server does not implement it: the copy is then written as any other.
 */
export async function wormObjectLock(
  s3: S3Client,
  remote: RemoteConnection,
  signal?: AbortSignal,
  now = Date.now(),
): Promise<ObjectLock | undefined> {
  let config;
  try {
    config = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: remote.bucket }), {
      abortSignal: signal,
    });
  } catch (err) {
    const { name, code } = statusOf(err);
    // Not configured (404), or a server without the API (501, or 400/405 for an unknown one).
    if (code === 404 || code === 501 || code === 405 || name === 'ObjectLockConfigurationNotFoundError') {
      return undefined;
    }
    if (code === 400 && name !== 'InvalidAccessKeyId') return undefined;
    throw toOffsiteError(
      err,
      `reading the Object Lock configuration of ${remote.bucket}`,
      describeRemote(remote),
    );
  }
  const lock = config.ObjectLockConfiguration;
  if (lock?.ObjectLockEnabled !== 'Enabled') return undefined;
  const rule = lock.Rule?.DefaultRetention;
  const days = rule?.Days ?? (rule?.Years !== undefined ? rule.Years * 365 : DEFAULT_WORM_RETENTION_DAYS);
  return {
    mode: rule?.Mode === 'GOVERNANCE' ? 'GOVERNANCE' : 'COMPLIANCE',
    retainUntil: new Date(now + days * DAY_MS),
  };
}

/** PutObject fields of a locked object; S3 wants a Content-MD5 with a retention. */
export function lockedPutFields(
  lock: ObjectLock | undefined,
  body: Uint8Array,
): { ObjectLockMode?: ObjectLock['mode']; ObjectLockRetainUntilDate?: Date; ContentMD5?: string } {
  if (!lock) return {};
  return {
    ObjectLockMode: lock.mode,
    ObjectLockRetainUntilDate: lock.retainUntil,
    ContentMD5: createHash('md5').update(body).digest('base64'),
  };
}
