import { RemoteRecord, RemoteSecret, badRequest, keys, type RemoteConnection } from '@vtl/api';
import type { Store } from '@vtl/store';

/**
 * What it takes to reach a stored remote's bucket: its record and its secret (opened by the
 * store's sealing key), read here so the offsite engine takes plain settings and never the
 * store. The one reader of a remote's secret, for the controller's remote
 * operations and the nodeagent's export and import jobs alike; a missing remote or secret is a
 * 400 that says what to do.
 */
export async function remoteConnection(store: Store, id: number): Promise<RemoteConnection> {
  const [found, secret] = await Promise.all([
    store.get(keys.remotes.one(id), RemoteRecord),
    store.get(keys.remoteSecrets.one(id), RemoteSecret),
  ]);
  if (!found) throw badRequest(`remote_id ${id}: no such remote; GET /api/remotes lists them.`);
  if (!secret)
    throw badRequest(`Remote ${id} has no secret key stored; set one with PUT /api/remotes/${id}.`);
  const { endpoint, region, bucket, prefix, access_key, use_ssl, path_style } = found.value;
  return {
    endpoint,
    region,
    bucket,
    prefix,
    access_key,
    secret_key: secret.value.secret_key,
    use_ssl,
    path_style,
  };
}
