import { z } from 'zod';

/** Created once on first start and kept. */
export const Identity = z.object({ system_uuid: z.uuid(), created_at: z.string() });
export type Identity = z.infer<typeof Identity>;

/** §2.10 */
export const SystemInfo = z.object({
  version: z.string(),
  started_at: z.string(),
  uptime_sec: z.number().int(),
  active_jobs: z.number().int(),
  plain_listener: z.string(),
  draining: z.boolean(),
  apikeys_enabled: z.boolean(),
  system_name: z.string(),
  system_uuid: z.string(),
});
export type SystemInfo = z.infer<typeof SystemInfo>;

/** §2.11 */
export const Health = z.object({
  ok: z.boolean(),
  ts: z.string(),
  version: z.string(),
  /** What does not answer when ok is false (answered with 503): e.g. ["store"]. */
  down: z.array(z.string()).optional(),
});

/** §2.13: the closed set of keys, all string-valued. */
export const SETTING_KEYS = [
  'apikeys.enabled',
  'export.ie_watcher',
  'export.default_remote',
  'evict.threshold_pct',
  'fc.disabled_ports',
  'system.name',
  'minting.enabled',
  'nag.no_offsite_dismissed',
] as const;
export const SettingKey = z.enum(SETTING_KEYS);
export type SettingKey = z.infer<typeof SettingKey>;
export const Settings = z.record(z.string(), z.string());
export type Settings = Record<string, string>;

/** A system name derived from the UUID until the operator sets `system.name`. */
export function defaultSystemName(uuid: string): string {
  return `vtl-${uuid.slice(0, 8)}`;
}

/** §2.12 */
export const License = z.object({ fingerprint: z.string(), changed: z.boolean(), previous: z.string() });
export type License = z.infer<typeof License>;
/** The fingerprint an operator last acknowledged (the first one seen counts as acknowledged). */
export const LicenseRecord = z.object({ acknowledged: z.string(), acknowledged_at: z.string() });
export type LicenseRecord = z.infer<typeof LicenseRecord>;
export const LicenseAck = z.object({ ok: z.literal(true), fingerprint: z.string() });
