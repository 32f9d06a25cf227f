import { randomUUID } from 'node:crypto';
import { Identity, Settings, defaultSystemName, isoNow, keys } from '@vtl/api';
import type { Store } from '@vtl/store';

/** The appliance identity, created once by whichever process asks first, then kept. */
export async function ensureIdentity(store: Store): Promise<Identity> {
  const fresh: Identity = { system_uuid: randomUUID(), created_at: isoNow() };
  const created = await store.create(keys.identity, fresh);
  if (created) return created.value;
  const existing = await store.get(keys.identity, Identity);
  if (!existing) throw new Error('identity record vanished while being read');
  return existing.value;
}

export async function readSettings(store: Store): Promise<Record<string, string>> {
  return (await store.get(keys.settings, Settings))?.value ?? {};
}

/** `system.name` if set, else a name derived from the UUID. */
export async function systemName(store: Store): Promise<string> {
  const [identity, settings] = await Promise.all([ensureIdentity(store), readSettings(store)]);
  return settings['system.name'] || defaultSystemName(identity.system_uuid);
}
