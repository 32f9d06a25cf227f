import {
  deleteFolder,
  listObjects,
  newGeneration,
  probeRemote,
  scanBucket,
  type RemoteConnection,
} from '@vtl/offsite';
import type { RemoteRecord } from '@vtl/api';

export type { RemoteConnection };

/** The @vtl/offsite functions the apiserver calls, in one place so routes stay free of S3. */
const engine = { probeRemote, listObjects, deleteFolder, scanBucket, newGeneration };

/** The transfer engine. */
export const offsite = () => engine;

/** Reads the S3 connection of a stored remote. */
export function connectionOf(remote: RemoteRecord, secretKey: string): RemoteConnection {
  const { endpoint, region, bucket, prefix, access_key, use_ssl, path_style } = remote;
  return { endpoint, region, bucket, prefix, access_key, secret_key: secretKey, use_ssl, path_style };
}
