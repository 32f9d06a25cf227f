import {
  deleteFolder,
  listObjects,
  newGeneration,
  probeRemote,
  scanBucket,
  type RemoteConnection,
} from '@vtl/offsite';
import type { RemoteRecord } from '@vtl/api';
import { remoteFailure } from './remote-errors.js';

export type { RemoteConnection };

/** "http(s)://host:port" of a remote, for messages. */
const endpointOf = (c: RemoteConnection) => `${c.use_ssl ? 'https' : 'http'}://${c.endpoint}`;

/** Runs an S3 operation, answering its failures as 502 remote_refused / 504 remote_unreachable. */
async function remoteCall<T>(what: string, conn: RemoteConnection, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw remoteFailure(err, what, endpointOf(conn));
  }
}

/** The @vtl/offsite functions the apiserver calls, in one place so routes stay free of S3. */
const engine = {
  probeRemote,
  listObjects: (c: RemoteConnection) => remoteCall('Listing the remote', c, () => listObjects(c)),
  deleteFolder: (c: RemoteConnection, folder: string) =>
    remoteCall(`Deleting ${folder} on the remote`, c, () => deleteFolder(c, folder)),
  scanBucket: (c: RemoteConnection) => remoteCall('Scanning the bucket', c, () => scanBucket(c)),
  newGeneration,
};

/** The transfer engine. */
export const offsite = () => engine;

/** Reads the S3 connection of a stored remote. */
export function connectionOf(remote: RemoteRecord, secretKey: string): RemoteConnection {
  const { endpoint, region, bucket, prefix, access_key, use_ssl, path_style } = remote;
  return { endpoint, region, bucket, prefix, access_key, secret_key: secretKey, use_ssl, path_style };
}
