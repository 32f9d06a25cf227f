import { InitiatorRecord, LibrarySpec, ManagedBy, PoolSpec, RemoteRecord, keys, nameFromKey } from '@vtl/api';
import { releaseInitiator, releaseLibrary, releasePool, releaseRemote } from '@vtl/domain';
import type { Store } from '@vtl/store';
import type { z } from 'zod';

/**
 * Drops a deleted source's ownership from every record it owned: the objects stay, as if made
 * through the API, so no source prunes them and another may adopt them. Each record's owner
 * module writes the release (only while this source still holds the claim).
 */
export async function releaseOwnership(store: Store, source: string): Promise<number> {
  let released = 0;
  const releaseEach = async <T extends { managed_by?: ManagedBy | undefined }>(
    prefix: string,
    schema: z.ZodType<T>,
    release: (key: string, value: T) => Promise<boolean>,
  ) => {
    const listed = await store.list(prefix, schema);
    for (const item of listed.items)
      if (item.value.managed_by?.source === source && (await release(item.key, item.value))) released++;
  };
  await releaseEach(keys.pools.prefix, PoolSpec, (_, p) => releasePool(store, p.id, source));
  await releaseEach(keys.libraries.prefix, LibrarySpec, (_, l) => releaseLibrary(store, l.id, source));
  await releaseEach(keys.initiators.prefix, InitiatorRecord, (key) =>
    releaseInitiator(store, nameFromKey(key), source),
  );
  await releaseEach(keys.remotes.prefix, RemoteRecord, (_, r) => releaseRemote(store, r.id, source));
  const settings = await store.get(keys.gitopsSettingsOwner, ManagedBy);
  if (settings?.value.source === source) {
    await store.delete(keys.gitopsSettingsOwner, { modRevision: settings.modRevision });
    released++;
  }
  return released;
}
