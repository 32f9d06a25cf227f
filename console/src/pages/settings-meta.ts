/**
 * What each setting key means and how it is edited (the values' rules are docs/api.md
 * "Settings"; the apiserver checks them again and its refusal is shown as it words it).
 */
export type SettingControl =
  | { kind: 'flag'; on: string; off: string }
  | { kind: 'remote' }
  | { kind: 'text'; pattern?: RegExp; hint: string; placeholder?: string }
  | { kind: 'reserved' };

export interface SettingMeta {
  title: string;
  description: string;
  control: SettingControl;
}

export const SETTINGS: Record<string, SettingMeta> = {
  'system.name': {
    title: 'System name',
    description: 'The appliance name in bucket keys: offsite copies are filed under it.',
    control: {
      kind: 'text',
      pattern: /^[a-z0-9][a-z0-9_-]{0,31}$/,
      hint: '1 to 32 of lowercase letters, digits, - and _, starting with a letter or digit.',
    },
  },
  'apikeys.enabled': {
    title: 'API keys',
    description: 'Whether API keys count as credentials. Off: a key is refused as if none were sent.',
    control: { kind: 'flag', on: '1', off: '0' },
  },
  'export.ie_watcher': {
    title: 'Export on I/E move',
    description:
      'On: a cartridge the host ejects to the import/export slot is exported to the default remote, and returns to its slot once the upload verifies.',
    control: { kind: 'flag', on: 'on', off: 'off' },
  },
  'export.default_remote': {
    title: 'Default remote',
    description: 'The remote the I/E watcher and the eviction policy use.',
    control: { kind: 'remote' },
  },
  'evict.threshold_pct': {
    title: 'Evict above pool fill (%)',
    description: 'Pool fill above which exported cartridges are evicted automatically. Empty disables.',
    control: {
      kind: 'text',
      pattern: /^(100|[1-9]\d?)?$/,
      hint: 'A whole percentage 1 to 100, or empty.',
      placeholder: 'off',
    },
  },
  'fc.disabled_ports': {
    title: 'Stopped FC ports',
    description:
      'Fibre Channel target ports not served. The Targets page stops and serves ports; this is the list it keeps.',
    control: {
      kind: 'text',
      hint: 'Comma-separated port WWNs (naa.<16 hex>, colon-separated bytes or 16 hex digits), or empty.',
      placeholder: 'none',
    },
  },
  'minting.enabled': {
    title: 'Minting switch (reserved)',
    description:
      'Reserved by the specification and has no effect: minting from the Cartridges page always works, whatever this reads.',
    control: { kind: 'reserved' },
  },
  'nag.no_offsite_dismissed': {
    title: 'Offsite reminder dismissed',
    description:
      'On: the overview no longer warns that nothing is offsite. Cleared when the last remote is deleted.',
    control: { kind: 'flag', on: '1', off: '0' },
  },
};

/** The client-side check of a text value: the hint when it does not fit, else undefined. */
export function textProblem(control: SettingControl, value: string): string | undefined {
  return control.kind === 'text' && control.pattern && !control.pattern.test(value.trim())
    ? control.hint
    : undefined;
}
