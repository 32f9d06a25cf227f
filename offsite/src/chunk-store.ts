import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ChunkExpectation, CodecPool } from './codec/codec-pool.js';
import type { DownloadResult } from './codec/http-download.js';
import type { StageTimes } from './codec/messages.js';
import { OffsiteError, isMissingObject, throwIfAborted, toOffsiteError } from './errors.js';
import { describeRemote, type RemoteConnection } from './remote.js';
import { lockedPutFields, type ObjectLock } from './object-lock.js';

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
  /** A WORM cartridge's chunk on a bucket with Object Lock: written with this retention. */
  lock?: ObjectLock,
): Promise<void> {
  const cmd = new PutObjectCommand({
    Bucket: remote.bucket,
    Key: key,
    Body: stored,
    ContentLength: stored.length,
    ContentType: 'application/zstd',
    Metadata: { [META_SHA256]: sha256 },
    ...lockedPutFields(lock, stored),
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

/** A GetObject request as the SDK signed it, for a codec thread to send. */
export interface SignedGet {
  url: string;
  headers: Record<string, string>;
}

/** Signs a GetObject with the client's credentials and returns it unsent. */
export async function signGet(
  s3: S3Client,
  remote: RemoteConnection,
  key: string,
  signal?: AbortSignal,
): Promise<SignedGet> {
  const cmd = new GetObjectCommand({ Bucket: remote.bucket, Key: key });
  let signed: SignedGet | undefined;
  cmd.middlewareStack.addRelativeTo(
    () => async (args: { request: unknown }) => {
      const r = args.request as {
        protocol: string;
        hostname: string;
        port?: number;
        path: string;
        query?: Record<string, string | string[] | null>;
        headers: Record<string, string>;
      };
      const query = Object.entries(r.query ?? {})
        .flatMap(([k, v]) => (v === null ? [k] : [v].flat().map((x) => `${rfc3986(k)}=${rfc3986(x)}`)))
        .join('&');
      signed = {
        url: `${r.protocol}//${r.hostname}${r.port ? `:${r.port}` : ''}${r.path}${query ? `?${query}` : ''}`,
        headers: { ...r.headers },
      };
      // Not sent: the codec thread sends it.
      return { output: { $metadata: {} } as never, response: undefined };
    },
    { relation: 'after', toMiddleware: 'httpSigningMiddleware', name: 'vtlKeepSignedRequest' },
  );
  await s3.send(cmd, { abortSignal: signal }).catch((err: unknown) => {
    throw toOffsiteError(err, `signing the download of ${key}`, describeRemote(remote));
  });
  if (!signed) throw new Error(`the S3 client did not sign the download of ${key}`);
  return signed;
}

function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const DOWNLOAD_ATTEMPTS = 3;
const DOWNLOAD_IDLE_MS = 60_000;

/**
 * Downloads a whole chunk into `into` (exactly its recorded size, shared memory from a
 * BufferRing) on a codec thread, retrying network failures. 'verify_failed' when it is missing
 * or of another size; 'unreachable', 'access_denied', 'not_found' (bucket) as S3 answers.
 */
export async function getChunk(
  s3: S3Client,
  remote: RemoteConnection,
  key: string,
  into: Uint8Array,
  codec: CodecPool,
  signal?: AbortSignal,
): Promise<void> {
  await withRetries(s3, remote, key, signal, (request) =>
    codec.download(request, into, { idleTimeoutMs: DOWNLOAD_IDLE_MS, signal }),
  );
}

/** A chunk fetched by fetchChunk: its all-zero block map and where the codec thread's time went. */
export interface FetchedChunk {
  zero: Uint8Array;
  times: StageTimes;
}

/**
 * Downloads a chunk and checks and unpacks it into `raw` as it arrives (CodecPool.fetch), with
 * getChunk's retries and errors; a chunk that arrives whole but fails a check (hash, zstd) is
 * 'verify_failed' and is not fetched again.
 */
export async function fetchChunk(
  s3: S3Client,
  remote: RemoteConnection,
  key: string,
  raw: Uint8Array,
  expect: ChunkExpectation & { stored_bytes: number },
  codec: CodecPool,
  signal?: AbortSignal,
): Promise<FetchedChunk> {
  let fetched: FetchedChunk | undefined;
  await withRetries(s3, remote, key, signal, async (request) => {
    const reply = await codec.fetch(request, raw, expect, { idleTimeoutMs: DOWNLOAD_IDLE_MS, signal });
    if (reply.result.ok) fetched = { zero: reply.zero!, times: reply.times! };
    return reply.result;
  });
  return fetched!;
}

async function withRetries(
  s3: S3Client,
  remote: RemoteConnection,
  key: string,
  signal: AbortSignal | undefined,
  attemptOnce: (request: SignedGet) => Promise<DownloadResult>,
): Promise<void> {
  const where = describeRemote(remote);
  let last: unknown;
  for (let attempt = 1; attempt <= DOWNLOAD_ATTEMPTS; attempt++) {
    throwIfAborted(signal, `download of ${key}`);
    const request = await signGet(s3, remote, key, signal);
    const r = await attemptOnce(request);
    if (r.ok) return;
    throwIfAborted(signal, `download of ${key}`);
    if ('mismatch' in r) throw new OffsiteError('verify_failed', `${key} in ${where} ${r.mismatch}`);
    if ('verify' in r) throw new OffsiteError('verify_failed', `${r.verify} (${key} in ${where})`);
    const sdkLike = Object.assign(new Error(r.message || ('s3code' in r ? r.s3code : r.errno)), {
      name: 's3code' in r ? r.s3code : 'Error',
      code: 'errno' in r ? r.errno : undefined,
      $metadata: { httpStatusCode: r.status || undefined },
    });
    if (isMissingObject(sdkLike)) throw new OffsiteError('verify_failed', `${key} is missing from ${where}`);
    last = toOffsiteError(sdkLike, `download of ${key}`, where);
    if (!(last instanceof OffsiteError && last.code === 'unreachable')) throw last;
    if (attempt < DOWNLOAD_ATTEMPTS)
      await new Promise((resolve) => setTimeout(resolve, 250 * 4 ** (attempt - 1)));
  }
  throw last;
}
