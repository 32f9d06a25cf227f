import {
  InitiatorChapSecret,
  InitiatorRecord,
  ManagedBy,
  RemoteRecord,
  RemoteSecret,
  Settings,
  StoredSecret,
  idFromKey,
  keys,
  nameFromKey,
} from '@vtl/api';
import { libraryState, loadSnapshot } from '@vtl/domain';
import type { Observed } from '@vtl/gitops';
import type { Store } from '@vtl/store';

/**
 * What the sync engine compares a declared set with: the records, and the secret values it needs
 * to tell whether a secret changed (kept in this process's memory, never in an answer or a log).
 */
export async function loadObserved(store: Store): Promise<Observed> {
  const [s, initiators, remotes, settings, secrets, remoteSecrets, chapSecrets, settingsOwner] =
    await Promise.all([
      loadSnapshot(store),
      store.list(keys.initiators.prefix, InitiatorRecord),
      store.list(keys.remotes.prefix, RemoteRecord),
      store.get(keys.settings, Settings),
      store.list(keys.gitopsSecrets.prefix, StoredSecret),
      store.list(keys.remoteSecrets.prefix, RemoteSecret),
      store.list(keys.initiatorSecrets.prefix, InitiatorChapSecret),
      store.get(keys.gitopsSettingsOwner, ManagedBy),
    ]);
  return {
    pools: s.pools.map((p) => ({ ...p, active: s.poolStatus.get(p.id)?.state === 'active' })),
    libraries: s.libraries.map((l) => ({ ...l, state: libraryState(s, l.id) })),
    initiators: initiators.items.map((i) => i.value),
    remotes: remotes.items.map((i) => i.value),
    settings: settings?.value ?? {},
    ...(settingsOwner ? { settingsOwner: settingsOwner.value } : {}),
    secrets: Object.fromEntries(secrets.items.map((i) => [nameFromKey(i.key), i.value.data])),
    remoteSecrets: Object.fromEntries(remoteSecrets.items.map((i) => [idFromKey(i.key), i.value.secret_key])),
    chapSecrets: Object.fromEntries(chapSecrets.items.map((i) => [nameFromKey(i.key), i.value])),
  };
}
