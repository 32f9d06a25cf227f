import { z } from 'zod';

/** Host or host:port; no scheme (use_ssl says which) and no path. */
const ENDPOINT = /^[A-Za-z0-9.-]+(:\d{1,5})?$/;

/** Fields an operator gives for a remote (§2.16, §4.4). Defaults per §8. */
const remoteFields = {
  name: z.string().trim().min(1, 'name is required').max(64).describe('Display name of the remote'),
  endpoint: z
    .string()
    .trim()
    .regex(ENDPOINT, 'endpoint must be host or host:port, without scheme or path')
    .default('s3.amazonaws.com')
    .describe('S3 endpoint, host or host:port'),
  region: z.string().trim().max(64).default('').describe('Bucket region'),
  bucket: z.string().trim().min(1, 'bucket is required').max(255).describe('Bucket name'),
  prefix: z
    .string()
    .trim()
    .max(512)
    .default('')
    .transform((p) => p.replace(/^\/+|\/+$/g, ''))
    .describe('Key prefix inside the bucket'),
  access_key: z.string().trim().min(1, 'access_key is required').max(256).describe('Access key id'),
  use_ssl: z.boolean().default(true).describe('Use HTTPS to reach the endpoint'),
  path_style: z.boolean().default(false).describe('Path-style bucket addressing'),
};

/** Body of POST /api/remotes. `secret_key` is write-only: stored apart, never returned. */
export const CreateRemoteRequest = z.strictObject({
  ...remoteFields,
  secret_key: z.string().min(1, 'secret_key is required').max(512).describe('Secret access key (write-only)'),
});
export type CreateRemoteRequest = z.infer<typeof CreateRemoteRequest>;

/**
 * Body of PUT /api/remotes/{id}: the fields of create, each optional; an omitted field keeps its
 * stored value, and an empty or omitted `secret_key` keeps the stored secret.
 */
export const UpdateRemoteRequest = z.strictObject({
  name: remoteFields.name.optional(),
  endpoint: z.string().trim().regex(ENDPOINT, 'endpoint must be host or host:port').optional(),
  region: z.string().trim().max(64).optional(),
  bucket: remoteFields.bucket.optional(),
  prefix: z
    .string()
    .trim()
    .max(512)
    .transform((p) => p.replace(/^\/+|\/+$/g, ''))
    .optional(),
  access_key: remoteFields.access_key.optional(),
  use_ssl: z.boolean().optional(),
  path_style: z.boolean().optional(),
  secret_key: z.string().max(512).optional(),
});
export type UpdateRemoteRequest = z.infer<typeof UpdateRemoteRequest>;

/** The stored remote (keys.remotes): everything but the secret, which lives at keys.remoteSecrets. */
export const RemoteRecord = z.object({
  id: z.number().int(),
  name: z.string(),
  endpoint: z.string(),
  region: z.string(),
  bucket: z.string(),
  prefix: z.string(),
  access_key: z.string(),
  use_ssl: z.boolean(),
  path_style: z.boolean(),
  created_at: z.string(),
  last_test_at: z.string().default(''),
  last_test_ok: z.boolean().default(false),
  last_test_detail: z.string().default(''),
});
export type RemoteRecord = z.infer<typeof RemoteRecord>;

/** The secret of one remote, in its own record so listing remotes never reads it. */
export const RemoteSecret = z.object({ secret_key: z.string() });
export type RemoteSecret = z.infer<typeof RemoteSecret>;

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
