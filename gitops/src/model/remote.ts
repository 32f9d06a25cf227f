import { z } from 'zod';
import { TEXT_LIMITS, displayText, plainText } from '@vtl/api';
import { API_VERSION, Metadata, SecretKeyRef, statusFields, type SpecRule } from './common.js';

/**
 * TapeRemote: an S3-compatible bucket cartridges are exported to (REST: POST /api/remotes). The
 * secret access key is never in the manifest: `secretRef` names a secret registered through the API.
 */
export const TapeRemoteSpec = z.strictObject({
  endpoint: z
    .string()
    .min(1)
    .max(300)
    .default('s3.amazonaws.com')
    .describe('S3 endpoint: host, host:port or an http(s):// URL (its scheme sets useSsl)'),
  region: displayText('region', TEXT_LIMITS.region).default('').describe('Bucket region'),
  bucket: displayText('bucket', TEXT_LIMITS.bucket).min(1).describe('Bucket name'),
  prefix: displayText('prefix', TEXT_LIMITS.prefix).default('').describe('Key prefix inside the bucket'),
  accessKey: plainText('accessKey', TEXT_LIMITS.accessKey).min(1).describe('Access key id'),
  useSsl: z.boolean().default(true).describe('Use HTTPS to reach the endpoint'),
  pathStyle: z.boolean().default(false).describe('Path-style bucket addressing'),
  secretRef: SecretKeyRef('secretKey').describe('Where the secret access key is kept'),
});
export type TapeRemoteSpec = z.infer<typeof TapeRemoteSpec>;

export const TapeRemoteStatus = z.object({
  ...statusFields,
  id: z.number().int().optional(),
  lastTestOk: z.boolean().optional(),
});

export const TapeRemote = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('TapeRemote'),
  metadata: Metadata(63),
  spec: TapeRemoteSpec,
  status: TapeRemoteStatus.optional(),
});
export type TapeRemote = z.infer<typeof TapeRemote>;

/** Every remote field has a PUT: nothing is immutable. */
export const tapeRemoteImmutable = [] as const;
export const tapeRemoteRules: SpecRule[] = [];
