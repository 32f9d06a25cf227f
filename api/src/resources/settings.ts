import { z } from 'zod';
import { SYSTEM_NAME, normalizeWwpn } from '../identifiers.js';
import { SETTING_KEYS, type SettingKey } from './system.js';

/**
 * §2.13: what each setting accepts. Every value is a string; an empty string means "unset"
 * wherever the spec allows it. Values are normalised (WWNs to `naa.<16 hex>`, trimmed) before
 * they are stored, so readers never see two spellings of one value.
 */
const flag = (what: string) =>
  z
    .string()
    .trim()
    .regex(/^[01]?$/, `${what} takes 1 (on), 0 or empty (off)`);

const onOff = (what: string) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^(on|off)?$/, `${what} takes on, off or empty (off)`);

const remoteId = z
  .string()
  .trim()
  .regex(/^([1-9]\d{0,8})?$/, 'export.default_remote takes a remote id (GET /api/remotes) or empty');

const percent = z
  .string()
  .trim()
  .regex(/^(100|[1-9]\d?)?$/, 'evict.threshold_pct takes a whole percentage 1 to 100, or empty to disable');

const portList = z.string().transform((s, ctx) => {
  const out: string[] = [];
  for (const part of s.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const wwn = normalizeWwpn(part);
    if (!wwn) {
      ctx.addIssue({
        code: 'custom',
        message: `fc.disabled_ports: "${part}" is not a port WWN (naa.<16 hex>, colon-separated bytes or 16 hex digits)`,
      });
      return z.NEVER;
    }
    if (!out.includes(wwn)) out.push(wwn);
  }
  return out.join(',');
});

const systemName = z
  .string()
  .trim()
  .regex(
    SYSTEM_NAME,
    'system.name must be 1 to 32 characters of lowercase letters, digits, - and _, starting with a letter or digit',
  );

export const SETTING_RULES: Record<SettingKey, z.ZodType<string, string>> = {
  // §2.13: `1` honours API keys and any other value ignores them, so every value is accepted.
  'apikeys.enabled': z.string().trim(),
  'export.ie_watcher': onOff('export.ie_watcher'),
  'export.default_remote': remoteId,
  'evict.threshold_pct': percent,
  'fc.disabled_ports': portList,
  'system.name': systemName,
  'minting.enabled': flag('minting.enabled'),
  'nag.no_offsite_dismissed': flag('nag.no_offsite_dismissed'),
};

/** What GET /api/settings shows for a key never written (`system.name`: the name derived from the UUID). */
export const SETTING_DEFAULTS: Record<SettingKey, string> = {
  'apikeys.enabled': '0',
  'export.ie_watcher': 'off',
  'export.default_remote': '',
  'evict.threshold_pct': '',
  'fc.disabled_ports': '',
  'system.name': '',
  'minting.enabled': '0',
  'nag.no_offsite_dismissed': '0',
};

/** The request body of PUT /api/settings: one or more keys, each a string. */
export const SettingsUpdate = z
  .record(z.string(), z.string({ error: 'every setting value is a string' }))
  .refine((m) => Object.keys(m).length > 0, 'send at least one setting key');

/** Splits an update into unknown keys and per-key failures; `values` holds the normalised ones. */
export function checkSettings(update: Record<string, string>): {
  unknown: string[];
  problems: string[];
  values: Partial<Record<SettingKey, string>>;
} {
  const unknown: string[] = [];
  const problems: string[] = [];
  const values: Partial<Record<SettingKey, string>> = {};
  for (const [key, value] of Object.entries(update)) {
    if (!(SETTING_KEYS as readonly string[]).includes(key)) {
      unknown.push(key);
      continue;
    }
    const parsed = SETTING_RULES[key as SettingKey].safeParse(value);
    if (parsed.success) values[key as SettingKey] = parsed.data;
    else problems.push(...parsed.error.issues.map((i) => i.message));
  }
  return { unknown, problems, values };
}

/**
 * Every key with its stored value or its default. An unset `system.name` shows the name in use
 * (derived from the UUID), so a client can PUT back what it read.
 */
export function withDefaults(
  stored: Record<string, string>,
  derivedSystemName: string,
): Record<SettingKey, string> {
  const out: Record<SettingKey, string> = { ...SETTING_DEFAULTS, 'system.name': derivedSystemName };
  for (const key of SETTING_KEYS) {
    const value = stored[key];
    if (value !== undefined && !(key === 'system.name' && value === '')) out[key] = value;
  }
  return out;
}
