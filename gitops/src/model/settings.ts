import { z } from 'zod';
import { SYSTEM_NAME, WWPN_INPUT } from '@vtl/api';
import { API_VERSION, DNS_LABEL, Metadata, statusFields, type SpecRule } from './common.js';

/**
 * ApplianceSettings: the settings of GET/PUT /api/settings (§2.13), one object per appliance.
 * The nesting follows the dotted keys (`export.ie_watcher` → `export.ieWatcher`); a field left out
 * is not managed (the appliance keeps whatever it has), so a repository declares only what it cares about.
 */
export const ApplianceSettingsSpec = z.strictObject({
  apiKeys: z.strictObject({ enabled: z.boolean().optional() }).optional(),
  export: z
    .strictObject({
      ieWatcher: z.boolean().optional().describe('Export cartridges placed in the I/E slots'),
      defaultRemoteRef: z
        .string()
        .regex(DNS_LABEL, 'export.defaultRemoteRef: the metadata.name of a TapeRemote, or empty')
        .or(z.literal(''))
        .optional()
        .describe('Name of the TapeRemote exports go to by default; empty = none'),
    })
    .optional(),
  evict: z
    .strictObject({
      thresholdPct: z
        .number()
        .int()
        .min(0)
        .max(100)
        .optional()
        .describe('Pool fill % that evicts; 0 = disabled'),
    })
    .optional(),
  fc: z
    .strictObject({
      disabledPorts: z.array(z.string().regex(WWPN_INPUT, 'fc.disabledPorts: port WWNs')).optional(),
    })
    .optional(),
  system: z
    .strictObject({
      name: z
        .string()
        .regex(SYSTEM_NAME, 'system.name: 1 to 32 lowercase letters, digits, - and _')
        .optional(),
    })
    .optional(),
  minting: z.strictObject({ enabled: z.boolean().optional() }).optional(),
  nag: z.strictObject({ noOffsiteDismissed: z.boolean().optional() }).optional(),
});
export type ApplianceSettingsSpec = z.infer<typeof ApplianceSettingsSpec>;

export const ApplianceSettingsStatus = z.object({ ...statusFields });

export const ApplianceSettings = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('ApplianceSettings'),
  metadata: Metadata(63),
  spec: ApplianceSettingsSpec,
  status: ApplianceSettingsStatus.optional(),
});
export type ApplianceSettings = z.infer<typeof ApplianceSettings>;

export const applianceSettingsImmutable = [] as const;
export const applianceSettingsRules: SpecRule[] = [];
