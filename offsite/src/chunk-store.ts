import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { OffsiteError, isMissingObject, toOffsiteError } from './errors.js';
import { describeRemote, type RemoteConnection } from './remote.js';

/** Object metadata of a chunk (x-amz-meta-*): what verification compares without downloading. */
export const META_SHA256 = 'sha256';

/** What a HeadObject says of a stored chunk. */
export interface StoredChunk {
  size: number;
  sha256: string | undefined;
}

/**
 * Uploads one chunk with a single PUT. The payload's SHA-256 is signed as
 * x-amz-content-sha256, so S3 itself rejects the upload if a byte arrives changed, and it is
 * kept as object metadata for later checks.
 */
export async function putChunk(
  s3: S3Client,
  remote: RemoteConnection,
  key: string,
  stored: Uint8Array,
  sha256: string,
  signal?: AbortSignal,
): Promise<void> {
  const cmd = new PutObjectCommand({
    Bucket: remote.bucket,
    Key: key,
    Body: stored,
    ContentLength: stored.length,
    ContentType: 'application/zstd',
    Metadata: { [META_SHA256]: sha256 },
  });
  // The signer uses a payload hash that is already set instead of hashing the body itself on
  // this thread: the codec thread computed it.
  cmd.middlewareStack.add(
    (next) => async (args) => {
      const req = args.request as { headers?: Record<string, string> };
      if (req.headers) req.headers['x-amz-content-sha256'] = sha256;
      return next(args);
    },
    { step: 'build', name: 'vtlPresetPayloadHash' },
  );
  await s3.send(cmd, { abortSignal: signal }).catch((err: unknown) => {
    throw toOffsiteError(err, `upload of ${key}`, describeRemote(remote));
  });
}

/** Size and recorded hashes of a chunk; undefined when it does not exist. */
export async function headChunk(
  s3: S3Client,
  remote: RemoteConnection,
  key: string,
  signal?: AbortSignal,
): Promise<StoredChunk | undefined> {
  try {
    const res = await s3.send(new HeadObjectCommand({ Bucket: remote.bucket, Key: key }), {
      abortSignal: signal,
    });
    return {
      size: res.ContentLength ?? -1,
      sha256: res.Metadata?.[META_SHA256],
    };
  } catch (err) {
    if (isMissingObject(err)) return undefined;
    throw toOffsiteError(err, `checking ${key}`, describeRemote(remote));
  }
}

/** Checks a just-uploaded chunk remote-side: it exists with the size and hash that were sent. */
export async function confirmChunk(
  s3: S3Client,
  remote: RemoteConnection,
  key: string,
  size: number,
  sha256: string,
  signal?: AbortSignal,
): Promise<void> {
  const got = await headChunk(s3, remote, key, signal);
  if (!got)
    throw new OffsiteError(
      'verify_failed',
      `${key} is missing right after its upload to ${describeRemote(remote)}`,
    );
  if (got.size !== size || got.sha256 !== sha256) {
    throw new OffsiteError(
      'verify_failed',
      `${key} in ${describeRemote(remote)} holds ${got.size} bytes with SHA-256 ${got.sha256 ?? 'unrecorded'}, ${size} bytes with ${sha256} were uploaded`,
    );
  }
}

/**
 * Downloads a whole chunk into `into` (exactly its recorded size, shared memory from a
 * BufferRing). 'verify_failed' when it is missing or of another size.
 */
export async function getChunk(
  s3: S3Client,
  remote: RemoteConnection,
  key: string,
  into: Uint8Array,
  signal?: AbortSignal,
): Promise<void> {
  const where = describeRemote(remote);
  const size = into.length;
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: remote.bucket, Key: key }), {
      abortSignal: signal,
    });
    const length = res.ContentLength ?? -1;
    if (length !== size) {
      (res.Body as Readable | undefined)?.destroy();
      throw new OffsiteError(
        'verify_failed',
        `${key} in ${where} is ${length} bytes, the manifest says ${size}`,
      );
    }
    let at = 0;
    for await (const piece of res.Body as AsyncIterable<Uint8Array>) {
      if (at + piece.length > size) {
        throw new OffsiteError('verify_failed', `${key} in ${where} is longer than its ${size} bytes`);
      }
      into.set(piece, at);
      at += piece.length;
    }
    if (at !== size) {
      throw new OffsiteError(
        'unreachable',
        `the download of ${key} from ${where} ended after ${at} of ${size} bytes; retry`,
      );
    }
  } catch (err) {
    if (isMissingObject(err)) {
      throw new OffsiteError('verify_failed', `${key} is missing from ${where}`, { cause: err });
    }
    throw toOffsiteError(err, `download of ${key}`, where);
  }
}
