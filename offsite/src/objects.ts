import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { z } from 'zod';
import { OffsiteError, isMissingObject, toOffsiteError } from './errors.js';
import { describeRemote, keyBase, s3For, type RemoteConnection } from './remote.js';
import { lockedPutFields, type ObjectLock } from './object-lock.js';

/** S3 allows at most this many keys per DeleteObjects. */
const DELETE_BATCH = 1000;

/** An object under a remote's prefix; `key` is relative to the prefix. */
export interface RemoteObject {
  key: string;
  size: number;
}

/** Every object under `under` (a full key prefix), paged through ListObjectsV2. */
export async function listFullKeys(
  s3: S3Client,
  remote: RemoteConnection,
  under: string,
  signal?: AbortSignal,
): Promise<{ key: string; size: number }[]> {
  const out: { key: string; size: number }[] = [];
  let token: string | undefined;
  do {
    const page = await s3
      .send(new ListObjectsV2Command({ Bucket: remote.bucket, Prefix: under, ContinuationToken: token }), {
        abortSignal: signal,
      })
      .catch((err: unknown) => {
        throw toOffsiteError(err, `listing ${under || '/'}`, describeRemote(remote));
      });
    for (const o of page.Contents ?? []) if (o.Key) out.push({ key: o.Key, size: o.Size ?? 0 });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

/** Every object under the remote's prefix, keys relative to it (GET /api/remotes/{id}/objects). */
export async function listObjects(remote: RemoteConnection, signal?: AbortSignal): Promise<RemoteObject[]> {
  const s3 = s3For(remote);
  try {
    const base = keyBase(remote);
    const all = await listFullKeys(s3, remote, base, signal);
    return all.map((o) => ({ key: o.key.slice(base.length), size: o.size }));
  } finally {
    s3.destroy();
  }
}

/**
 * Deletes every object under `folder` (relative to the remote prefix, ending in '/'), in
 * batches; returns how many were deleted. A folder without the trailing '/' is refused
 * ('invalid'), so "ABC" can never take "ABCD/" with it.
 */
export async function deleteFolder(
  remote: RemoteConnection,
  folder: string,
  signal?: AbortSignal,
): Promise<number> {
  if (!folder.endsWith('/') || folder.startsWith('/') || folder.split('/').some((s) => s === '..')) {
    throw new OffsiteError(
      'invalid',
      `"${folder}" is not a folder prefix: give a path relative to the remote prefix that ends with "/"`,
    );
  }
  const s3 = s3For(remote);
  try {
    const full = `${keyBase(remote)}${folder}`;
    const keys = (await listFullKeys(s3, remote, full, signal)).map((o) => o.key);
    let deleted = 0;
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const res = await s3
        .send(
          new DeleteObjectsCommand({
            Bucket: remote.bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
          { abortSignal: signal },
        )
        .catch((err: unknown) => {
          throw toOffsiteError(err, `deleting ${folder}`, describeRemote(remote));
        });
      const failed = res.Errors ?? [];
      if (failed.length > 0) {
        const first = failed[0];
        throw new Error(
          `deleting ${folder}: ${failed.length} objects were not deleted (first: ${first?.Key}: ${first?.Code} ${first?.Message}); run the deletion again`,
        );
      }
      deleted += batch.length;
    }
    return deleted;
  } finally {
    s3.destroy();
  }
}

/** Reads and validates a JSON object; undefined when the key does not exist. */
export async function getJson<T>(
  s3: S3Client,
  remote: RemoteConnection,
  key: string,
  schema: z.ZodType<T>,
  signal?: AbortSignal,
): Promise<T | undefined> {
  let text: string;
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: remote.bucket, Key: key }), {
      abortSignal: signal,
    });
    text = (await res.Body?.transformToString('utf8')) ?? '';
  } catch (err) {
    if (isMissingObject(err)) return undefined;
    throw toOffsiteError(err, `reading ${key}`, describeRemote(remote));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new OffsiteError('verify_failed', `${key} in ${describeRemote(remote)} is not valid JSON`);
  }
  const result = schema.safeParse(parsed);
  if (!result.success) {
    throw new OffsiteError(
      'verify_failed',
      `${key} in ${describeRemote(remote)} does not have the expected fields: ${result.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.')}: ${i.message}`)
        .join('; ')}`,
    );
  }
  return result.data;
}

/** Writes a JSON object (pretty, newline-terminated, so people can read it in a bucket browser). */
export async function putJson(
  s3: S3Client,
  remote: RemoteConnection,
  key: string,
  value: unknown,
  signal?: AbortSignal,
  lock?: ObjectLock,
): Promise<void> {
  const body = Buffer.from(`${JSON.stringify(value, null, 2)}\n`);
  await s3
    .send(
      new PutObjectCommand({
        Bucket: remote.bucket,
        Key: key,
        Body: body,
        ContentLength: body.length,
        ContentType: 'application/json',
        ...lockedPutFields(lock, body),
      }),
      { abortSignal: signal },
    )
    .catch((err: unknown) => {
      throw toOffsiteError(err, `writing ${key}`, describeRemote(remote));
    });
}
