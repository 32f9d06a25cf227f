import { z } from 'zod';
import { LABEL_PREFIX } from '@vtl/api';
import { API_VERSION, DNS_LABEL, Metadata, statusFields, type SpecRule } from './common.js';

export const Activation = z.enum(['manual', 'auto']);
export type Activation = z.infer<typeof Activation>;

/**
 * VirtualTapeLibrary: an emulated changer and its drives on a pool (REST: POST /api/libraries).
 * Activation restarts the data plane (every host session drops), so `manual` is the default.
 */
export const VirtualTapeLibrarySpec = z.strictObject({
  product: z
    .enum(['3573-TL', '03584L32'])
    .describe('Library product: 3573-TL (TS3100/TS3200) or 03584L32 (TS3500)'),
  driveProduct: z
    .string()
    .regex(/^ULT3580-(TD|HH)[3-9A]$/, 'driveProduct: an IBM drive, e.g. ULT3580-TD8 (GET /api/models)')
    .describe('Drive product, e.g. ULT3580-TD8'),
  numDrives: z.number().int().min(1).max(12).describe('Drives: 1 to 4 (3573-TL) or 1 to 12 (03584L32)'),
  numSlots: z.number().int().min(1).max(400).default(100).describe('Storage slots (default 100)'),
  numMap: z.number().int().min(1).max(32).default(4).describe('Import/export (mail) slots (default 4)'),
  labelPrefix: z.string().regex(LABEL_PREFIX, 'labelPrefix: exactly three characters A-Z or 0-9'),
  poolRef: z
    .string()
    .min(1)
    .max(32)
    .regex(DNS_LABEL, 'poolRef: the metadata.name of a TapePool')
    .describe('Name of the TapePool that homes the library (declared or existing)'),
  activation: Activation.default('manual').describe(
    'auto: activate on sync (restarts the data plane); manual (default): wait for POST /api/libraries/apply',
  ),
});
export type VirtualTapeLibrarySpec = z.infer<typeof VirtualTapeLibrarySpec>;

export const VirtualTapeLibraryStatus = z.object({
  ...statusFields,
  id: z.number().int().optional(),
  serial: z.string().optional(),
  state: z.enum(['pending_restart', 'active']).optional(),
});

export const VirtualTapeLibrary = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('VirtualTapeLibrary'),
  metadata: Metadata(63),
  spec: VirtualTapeLibrarySpec,
  status: VirtualTapeLibraryStatus.optional(),
});
export type VirtualTapeLibrary = z.infer<typeof VirtualTapeLibrary>;

/** There is no library update route: only the activation policy may change. */
export const virtualTapeLibraryImmutable = [
  'product',
  'driveProduct',
  'numDrives',
  'numSlots',
  'numMap',
  'labelPrefix',
  'poolRef',
] as const;

export const virtualTapeLibraryRules: SpecRule[] = [
  {
    rule: "self.product != '3573-TL' || self.numDrives <= 4",
    message: 'numDrives must be 1 to 4 for a 3573-TL',
    field: 'numDrives',
  },
];
