import { randomBytes } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { toOffsiteError } from './errors.js';
import { PROBE_PREFIX } from './layout.js';
import { describeRemote, keyBase, s3For, type RemoteConnection } from './remote.js';

/** Result of probeRemote: `detail` says what worked or what failed and what to check. */
export interface ProbeResult {
  ok: boolean;
  detail: string;
}

/**
 * Writes a probe object under the remote's prefix, reads it back, compares and deletes it
 * (POST /api/remotes/{id}/test). Never throws: a failure is `ok: false` with the reason.
 */
export async function probeRemote(remote: RemoteConnection, signal?: AbortSignal): Promise<ProbeResult> {
  // One attempt and short timeouts: an operator is waiting for the answer.
  const s3 = s3For(remote, { maxAttempts: 1, connectionTimeoutMs: 5_000, idleTimeoutMs: 15_000 });
  const where = describeRemote(remote);
  const key = `${keyBase(remote)}${PROBE_PREFIX}${randomBytes(8).toString('hex')}`;
  const payload = `vtl probe ${new Date().toISOString()} ${randomBytes(16).toString('hex')}\n`;
  let step = 'write';
  try {
    await s3.send(
      new PutObjectCommand({
        Bucket: remote.bucket,
        Key: key,
        Body: payload,
        ContentLength: Buffer.byteLength(payload),
      }),
      { abortSignal: signal },
    );
    step = 'read back';
    const res = await s3.send(new GetObjectCommand({ Bucket: remote.bucket, Key: key }), {
      abortSignal: signal,
    });
    const got = (await res.Body?.transformToString('utf8')) ?? '';
    step = 'delete';
    await s3.send(new DeleteObjectCommand({ Bucket: remote.bucket, Key: key }), {
      abortSignal: signal,
    });
    if (got !== payload) {
      return {
        ok: false,
        detail: `${where}: the probe object read back differs from what was written (${got.length} of ${payload.length} bytes); the S3 service is corrupting data`,
      };
    }
    return { ok: true, detail: `${where}: wrote, read back and deleted ${key}` };
  } catch (err) {
    const e = toOffsiteError(err, `probe ${step}`, where);
    const code = (e as { code?: string }).code;
    return { ok: false, detail: code ? `${code}: ${e.message}` : e.message };
  } finally {
    s3.destroy();
  }
}
