import { z } from 'zod';

/** A key of a Secret in the resource's namespace. */
export const SecretKeyRef = z.strictObject({
  name: z.string().min(1).max(253).describe('Name of a Secret in the same namespace'),
  key: z.string().min(1).max(253).default('secret_key').describe('Key inside the Secret'),
});

/**
 * Body of POST /api/remotes (spec §4.4) with the write-only `secret_key` replaced by a Secret
 * reference, so no credential sits in Git. Defined here because @vtl/api has no remote schema
 * yet; once it has one, derive this from it (`.omit({ secret_key: true }).extend(...)`).
 */
export const RemoteSpec = z.strictObject({
  name: z.string().min(1).describe('Display name of the remote'),
  endpoint: z.string().min(1).default('s3.amazonaws.com').describe('S3 endpoint, host or host:port'),
  region: z.string().default('').describe('Bucket region'),
  bucket: z.string().min(1).describe('Bucket name'),
  prefix: z.string().default('').describe('Key prefix inside the bucket'),
  access_key: z.string().min(1).describe('Access key id'),
  use_ssl: z.boolean().default(true).describe('Use HTTPS to reach the endpoint'),
  path_style: z.boolean().default(false).describe('Path-style bucket addressing'),
  secretRef: SecretKeyRef.describe('Where the secret access key is kept'),
});
export type RemoteSpec = z.infer<typeof RemoteSpec>;
