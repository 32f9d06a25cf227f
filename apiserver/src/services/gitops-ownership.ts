import { InitiatorRecord, LibrarySpec, ManagedBy, PoolSpec, RemoteRecord, keys, nameFromKey } from '@vtl/api';
import { releaseInitiator, releaseLibrary, releasePool, releaseRemote } from '@vtl/domain';
import type { Store } from '@vtl/store';
import type { z } from 'zod';

/*
 * GitOps ownership: which source manages each object. Records carry their claim (managed_by),
 * written by each record's owner module; the appliance settings' claim is a record of its own
 * (keys.gitopsSettingsOwner), written here alone.
 */

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
  if (await releaseSettings(store, source)) released++;
  return released;
}

/**
 * Records the source that manages the appliance settings. They have no record of their own to
 * carry managed_by, so their owner is kept apart (keys.gitopsSettingsOwner), and a second source
 * declaring them is refused by the planner, which names this one.
 */
export async function claimSettings(store: Store, managed: ManagedBy): Promise<void> {
  await store.put(keys.gitopsSettingsOwner, managed);
}

/** Drops `source`'s claim on the settings (compared as read); true when it held it. */
export async function releaseSettings(store: Store, source: string): Promise<boolean> {
  const settings = await store.get(keys.gitopsSettingsOwner, ManagedBy);
  if (settings?.value.source !== source) return false;
  return store.delete(keys.gitopsSettingsOwner, { modRevision: settings.modRevision });
}
