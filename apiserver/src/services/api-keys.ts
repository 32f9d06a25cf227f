import { type ApiKeyRecord, isoNow, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import { newApiKey, sha256 } from './secrets.js';

/**
 * API key records (§5.1, 5.2; api/src/keys.ts `apiKeys`): the only writer of auth/apikeys/.
 * A key is stored as its hash; the key itself exists only in the answer to its creation.
 */

/** A new key with the next id (taken in the key's own transaction); undefined if ids kept racing. */
export async function createApiKey(
  store: Store,
  req: Pick<ApiKeyRecord, 'name' | 'role'> & { createdBy: string },
): Promise<{ key: string; record: ApiKeyRecord } | undefined> {
  return store.withNewId('apikeys', 1, async (next) => {
    const key = newApiKey(next.id);
    const record: ApiKeyRecord = {
      id: next.id,
      name: req.name,
      role: req.role,
      key_hash: sha256(key),
      created_at: isoNow(),
      created_by: req.createdBy,
    };
    const txn = store.transaction();
    next.take(txn);
    txn.ifAbsent(keys.apiKeys.one(next.id)).put(keys.apiKeys.one(next.id), record);
    return (await txn.commit()) ? { key, record } : undefined;
  });
}

/** Revokes key `id`; false if there was none. */
export async function revokeApiKey(store: Store, id: number): Promise<boolean> {
  return store.delete(keys.apiKeys.one(id));
}
