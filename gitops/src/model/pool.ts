import { z } from 'zod';
import { CONTROL_CHARS } from '@vtl/api';
import { API_VERSION, Metadata, statusFields, type SpecRule } from './common.js';

/** TapePool: a directory on a node that holds cartridge images (REST: POST /api/pools). */
export const TapePoolSpec = z.strictObject({
  node: z
    .string()
    .min(1)
    .max(63)
    .optional()
    .describe('Node that holds the directory; omitted = the only node (refused when there are several)'),
  path: z
    .string()
    .min(1)
    .max(4096)
    .regex(/^\//, 'path must be absolute')
    .refine((p) => !CONTROL_CHARS.test(p), 'path: control characters are not allowed')
    .describe('Absolute directory on the node'),
});
export type TapePoolSpec = z.infer<typeof TapePoolSpec>;

export const TapePoolStatus = z.object({
  ...statusFields,
  id: z.number().int().optional().describe('The pool id the appliance assigned'),
  state: z.enum(['active', 'error', 'offline']).optional(),
});

export const TapePool = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('TapePool'),
  // REST pool names: at most 32 characters.
  metadata: Metadata(32),
  spec: TapePoolSpec,
  status: TapePoolStatus.optional(),
});
export type TapePool = z.infer<typeof TapePool>;

/** There is no pool update route: a moved pool is a new pool. */
export const tapePoolImmutable = ['node', 'path'] as const;
export const tapePoolRules: SpecRule[] = [];
