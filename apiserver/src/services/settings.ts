import {
  Settings,
  VtlError,
  checkSettings,
  defaultSystemName,
  keys,
  withDefaults,
  type SettingKey,
} from '@vtl/api';
import type { Store, Txn, Versioned } from '@vtl/store';
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
 * PUT /api/targets/ports' setting: the port joins (`serving` false) or leaves
 * `fc.disabled_ports`, in one compare-and-swap with the other settings as they are.
 */
export async function setPortDisabled(
  store: Store,
  wwn: string,
  serving: boolean,
): Promise<Versioned<Settings>> {
  const updated = await store.update(keys.settings, Settings, (cur) => {
    const current = cur?.['fc.disabled_ports'] ?? '';
    const disabled = current.split(',').filter((p) => p !== '' && p !== wwn);
    if (!serving) disabled.push(wwn);
    const { values } = checkSettings({ 'fc.disabled_ports': disabled.join(',') });
    return { ...(cur ?? {}), 'fc.disabled_ports': values['fc.disabled_ports'] ?? '' };
  });
  return updated!;
}

/**
 * What a remote's delete does to the settings, as the part of its transaction that does it
 * (§2.13): clears export.default_remote when it names this remote (the watcher and the eviction
 * policy then have none, rather than a dangling id), and when it was the last remote
 * (`remotesLeft` 0) clears nag.no_offsite_dismissed, so the warning comes back exactly when no
 * offsite copy is possible. The settings are compared as read now.
 */
export async function settingsWithoutRemote(
  store: Store,
  id: number,
  remotesLeft: number,
): Promise<(txn: Txn) => void> {
  const settings = await store.get(keys.settings, Settings);
  if (!settings) return (txn) => void txn.ifAbsent(keys.settings);
  const dropNag = remotesLeft === 0 && !!settings.value['nag.no_offsite_dismissed'];
  const dropDefault = settings.value['export.default_remote'] === String(id);
  return (txn) => {
    txn.ifModRevision(keys.settings, settings.modRevision);
    if (!dropNag && !dropDefault) return;
    const rest = { ...settings.value };
    if (dropNag) delete rest['nag.no_offsite_dismissed'];
    if (dropDefault) delete rest['export.default_remote'];
    txn.put(keys.settings, rest);
  };
}
