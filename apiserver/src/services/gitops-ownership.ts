import { InitiatorRecord, LibrarySpec, ManagedBy, PoolSpec, RemoteRecord, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import type { z } from 'zod';

/**
 * Drops a deleted source's ownership from every record it owned: the objects stay, as if made
 * through the API, so no source prunes them and another may adopt them.
 */
export async function releaseOwnership(store: Store, source: string): Promise<number> {
  let released = 0;
  const release = async <T extends { managed_by?: ManagedBy | undefined }>(
    prefix: string,
    schema: z.ZodType<T>,
  ) => {
    const listed = await store.list(prefix, schema);
    for (const item of listed.items) {
      if (item.value.managed_by?.source !== source) continue;
      await store.update(item.key, schema, (cur) => {
        if (!cur || cur.managed_by?.source !== source) return undefined;
        const { managed_by: _dropped, ...rest } = cur;
        return rest as T;
      });
      released++;
    }
  };
  await release(keys.pools.prefix, PoolSpec);
  await release(keys.libraries.prefix, LibrarySpec);
  await release(keys.initiators.prefix, InitiatorRecord);
  await release(keys.remotes.prefix, RemoteRecord);
  const settings = await store.get(keys.gitopsSettingsOwner, ManagedBy);
  if (settings?.value.source === source) {
    await store.delete(keys.gitopsSettingsOwner, { modRevision: settings.modRevision });
    released++;
  }
  return released;
}
