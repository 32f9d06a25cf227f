import { z } from 'zod';
import { parseEndpoint } from '../endpoint.js';
import { EDGE_WHITE_SPACE, TEXT_LIMITS, displayText, plainText, secretText } from '../text.js';
import { ManagedBy } from './managed-by.js';

/** Host, host:port or an http(s) URL (see parseEndpoint); stored as host[:port]. */
const endpointField = () =>
  z
    .string()
    .max(300, 'endpoint: at most 300 characters')
    .refine((s) => !EDGE_WHITE_SPACE.test(s), 'endpoint: no white space at the start or the end')
    .superRefine((s, ctx) => {
      const parsed = parseEndpoint(s);
      if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
    });

/** A URL endpoint becomes host[:port], its scheme setting use_ssl (the scheme wins over use_ssl). */
function normalizeEndpoint<T extends { endpoint?: string; use_ssl?: boolean }>(body: T): T {
  if (body.endpoint === undefined) return body;
  const parsed = parseEndpoint(body.endpoint);
  if (typeof parsed === 'string') return body;
  return {
    ...body,
    endpoint: parsed.hostPort,
    ...(parsed.useSsl === undefined ? {} : { use_ssl: parsed.useSsl }),
  };
}

/** Fields an operator gives for a remote (§2.16, §4.4). Defaults per §8. */
const remoteFields = {
  name: displayText('name', TEXT_LIMITS.name)
    .min(1, 'name is required')
    .describe('Display name of the remote'),
  endpoint: endpointField()
    .default('s3.amazonaws.com')
    .describe('S3 endpoint: host, host:port or an http(s):// URL (its scheme sets use_ssl)'),
  region: displayText('region', TEXT_LIMITS.region).default('').describe('Bucket region'),
  bucket: displayText('bucket', TEXT_LIMITS.bucket).min(1, 'bucket is required').describe('Bucket name'),
  prefix: displayText('prefix', TEXT_LIMITS.prefix)
    .default('')
    .transform((p) => p.replace(/^\/+|\/+$/g, ''))
    .describe('Key prefix inside the bucket'),
  access_key: plainText('access_key', TEXT_LIMITS.accessKey)
    .min(1, 'access_key is required')
    .describe('Access key id'),
  use_ssl: z.boolean().default(true).describe('Use HTTPS to reach the endpoint'),
  path_style: z.boolean().default(false).describe('Path-style bucket addressing'),
};

/** The fields of POST /api/remotes, before a URL endpoint is normalised (the CRD schema's base). */
export const CreateRemoteFields = z.strictObject({
  ...remoteFields,
  secret_key: secretText('secret_key', 512)
    .min(1, 'secret_key is required')
    .describe('Secret access key (write-only)'),
});

/** Body of POST /api/remotes. `secret_key` is write-only: stored apart, never returned. */
export const CreateRemoteRequest = CreateRemoteFields.transform(normalizeEndpoint);
export type CreateRemoteRequest = z.infer<typeof CreateRemoteRequest>;

/**
 * Body of PUT /api/remotes/{id}: the fields of create, each optional; an omitted field keeps its
 * stored value, and an empty or omitted `secret_key` keeps the stored secret.
 */
export const UpdateRemoteRequest = z
  .strictObject({
    name: remoteFields.name.optional(),
    endpoint: endpointField().optional(),
    region: displayText('region', TEXT_LIMITS.region).optional(),
    bucket: remoteFields.bucket.optional(),
    prefix: displayText('prefix', TEXT_LIMITS.prefix)
      .transform((p) => p.replace(/^\/+|\/+$/g, ''))
      .optional(),
    access_key: remoteFields.access_key.optional(),
    use_ssl: z.boolean().optional(),
    path_style: z.boolean().optional(),
    secret_key: secretText('secret_key', 512).optional(),
  })
  .transform(normalizeEndpoint);
export type UpdateRemoteRequest = z.infer<typeof UpdateRemoteRequest>;

/** The stored remote (keys.remotes): everything but the secret, which lives at keys.remoteSecrets. */
export const RemoteRecord = z.object({
  id: z.number().int(),
  name: z.string(),
  /** host or host:port, no scheme. */
  endpoint: z.string(),
  /** Empty means us-east-1, which S3-compatible servers accept. */
  region: z.string(),
  bucket: z.string(),
  /** Key prefix inside the bucket; leading and trailing '/' are ignored. */
  prefix: z.string(),
  access_key: z.string(),
  use_ssl: z.boolean(),
  path_style: z.boolean(),
  created_at: z.string(),
  last_test_at: z.string().default(''),
  last_test_ok: z.boolean().default(false),
  last_test_detail: z.string().default(''),
  /** The GitOps source that owns the remote (docs/gitops.md); absent when made through REST. */
  managed_by: ManagedBy.optional(),
});
export type RemoteRecord = z.infer<typeof RemoteRecord>;

/** The secret of one remote, in its own record so listing remotes never reads it. */
export const RemoteSecret = z.object({ secret_key: z.string() });
export type RemoteSecret = z.infer<typeof RemoteSecret>;

/**
 * What it takes to reach a remote's bucket: the stored remote's S3 settings and its secret, as
 * the offsite engine takes them from its caller (which reads them from the store).
 */
export type RemoteConnection = Pick<
  RemoteRecord,
  'endpoint' | 'region' | 'bucket' | 'prefix' | 'access_key' | 'use_ssl' | 'path_style'
> &
  RemoteSecret;

/** §2.16: the remote as the API returns it. */
export const Remote = RemoteRecord.extend({ has_secret: z.boolean() });
export type Remote = z.infer<typeof Remote>;

export const RemoteTestResult = z.object({ ok: z.boolean(), detail: z.string() });
export const RemoteObjects = z.object({
  objects: z.array(z.object({ key: z.string(), size: z.number().int() })),
});
export const DeleteRemoteObjectsRequest = z.strictObject({
  prefix: z
    .string()
    .min(1, 'prefix is required')
    .describe('Folder prefix relative to the remote prefix; ends with /'),
});
export const DeleteRemoteObjectsResponse = z.object({ deleted: z.number().int() });
