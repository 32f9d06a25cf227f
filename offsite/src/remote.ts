import { S3Client } from '@aws-sdk/client-s3';
import type { RemoteConnection } from '@vtl/api';

export type { RemoteConnection };

/** Tuning of s3For(); the defaults suit both AWS and an RGW on the same machine. */
export interface S3ClientOptions {
  /** Attempts per request including the first (SDK standard retry with backoff); default 3. */
  maxAttempts?: number;
  /** Give up connecting after this long; default 5 s. */
  connectionTimeoutMs?: number;
  /**
   * Give up on a request whose socket sends and receives nothing this long (a hung server);
   * default 60 s. Idle time, not total time, so a big chunk on a slow link still completes.
   */
  idleTimeoutMs?: number;
}

/**
 * An S3 client for a remote. Flexible checksums only when an operation requires them: the SDK's
 * default aws-chunked uploads are refused by RGW (411) and Swift (501).
 */
export function s3For(remote: RemoteConnection, opts: S3ClientOptions = {}): S3Client {
  return new S3Client({
    endpoint: `${remote.use_ssl ? 'https' : 'http'}://${remote.endpoint}`,
    region: remote.region || 'us-east-1',
    credentials: { accessKeyId: remote.access_key, secretAccessKey: remote.secret_key },
    forcePathStyle: remote.path_style,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: opts.maxAttempts ?? 3,
    requestHandler: {
      connectionTimeout: opts.connectionTimeoutMs ?? 5_000,
      socketTimeout: opts.idleTimeoutMs ?? 60_000,
    },
  });
}

/** "bucket at host:port" for messages. */
export function describeRemote(remote: RemoteConnection): string {
  return `bucket ${remote.bucket} at ${remote.use_ssl ? 'https' : 'http'}://${remote.endpoint}`;
}

/** The remote's prefix as a key prefix: '' or 'some/prefix/'. */
export function keyBase(remote: RemoteConnection): string {
  const p = remote.prefix.replace(/^\/+|\/+$/g, '');
  return p ? `${p}/` : '';
}
