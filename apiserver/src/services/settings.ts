import {
  Settings,
  VtlError,
  checkSettings,
  defaultSystemName,
  keys,
  withDefaults,
  type SettingKey,
} from '@vtl/api';
import type { Store, Txn } from '@vtl/store';
import { z } from 'zod';
import { ensureIdentity, readSettings } from './identity.js';

/** GET /api/settings: every key of §2.13, stored or default. */
export async function settingsView(store: Store): Promise<Record<SettingKey, string>> {
  const [identity, stored] = await Promise.all([ensureIdentity(store), readSettings(store)]);
  return withDefaults(stored, defaultSystemName(identity.system_uuid));
}

/**
 * PUT /api/settings: every key is checked before anything is written, and all of them are
 * written in one compare-and-swap, so a refused request changes nothing (§4.2 rule 6).
 */
export async function updateSettings(store: Store, update: Record<string, string>) {
  const { unknown, problems, values } = checkSettings(update);
  if (unknown.length > 0)
    throw new VtlError(
      'bad_request',
      `Unknown setting key(s): ${unknown.join(', ')}; nothing was written. The keys are those of GET /api/settings.`,
      { unknown },
    );
  if (problems.length > 0)
    throw new VtlError('validation_failed', `${problems.join('; ')}. Nothing was written.`, {
      issues: problems,
    });
  const remote = values['export.default_remote'];
  if (remote && !(await store.get(keys.remotes.one(Number(remote)), z.unknown())))
    throw new VtlError(
      'validation_failed',
      `export.default_remote: no remote ${remote} (GET /api/remotes lists them). Nothing was written.`,
      { issues: [`export.default_remote: no remote ${remote}`] },
    );
  await store.update(keys.settings, Settings, (current) => ({ ...(current ?? {}), ...values }));
  return settingsView(store);
}

/**
 * Deletes a remote's record and, in the same transaction (§2.13): clears export.default_remote
 * when it names this remote (the watcher and the eviction policy then have none, rather than a
 * dangling id), and when it was the last remote clears nag.no_offsite_dismissed, so the warning
 * comes back exactly when no offsite copy is possible. Retries while the remotes or the settings change underneath; a remote created in
 * that window only means the (hidden) warning would show again after its deletion, as it should.
 */
export async function deleteRemoteRecord(
  store: Store,
  id: number,
  extraDeletes: string[] = [],
  /** Re-checks before each attempt (throws the refusal) and returns what the transaction compares. */
  recheck: () => Promise<(txn: Txn) => void> = async () => () => undefined,
) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const guard = await recheck();
    const { items } = await store.list(keys.remotes.prefix, z.unknown());
    const target = items.find((i) => i.key === keys.remotes.one(id));
    if (!target) return false;
    const settings = await store.get(keys.settings, Settings);
    const txn = store.transaction();
    for (const r of items) txn.ifModRevision(r.key, r.modRevision);
    const dropNag = items.length === 1 && !!settings?.value['nag.no_offsite_dismissed'];
    const dropDefault = settings?.value['export.default_remote'] === String(id);
    if (settings && (dropNag || dropDefault)) {
      txn.ifModRevision(keys.settings, settings.modRevision);
      const rest = { ...settings.value };
      if (dropNag) delete rest['nag.no_offsite_dismissed'];
      if (dropDefault) delete rest['export.default_remote'];
      txn.put(keys.settings, rest);
    } else if (settings) txn.ifModRevision(keys.settings, settings.modRevision);
    else txn.ifAbsent(keys.settings);
    guard(txn);
    txn.delete(target.key);
    // writes keys.remoteSecrets
    for (const key of extraDeletes) txn.delete(key);
    if (await txn.commit()) return true;
  }
  throw new VtlError('conflict', 'The remotes kept changing while deleting one; retry.');
}
