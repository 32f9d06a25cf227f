import { z } from 'zod';
import { CreateRemoteFields } from '@vtl/api';

/** A key of a Secret in the resource's namespace. */
export const SecretKeyRef = z.strictObject({
  name: z.string().min(1).max(253).describe('Name of a Secret in the same namespace'),
  key: z.string().min(1).max(253).default('secret_key').describe('Key inside the Secret'),
});

/**
 * Body of POST /api/remotes (spec §4.4, @vtl/api CreateRemoteRequest) with the write-only
 * `secret_key` replaced by a Secret reference, so no credential sits in Git.
 */
export const RemoteSpec = CreateRemoteFields.omit({ secret_key: true }).extend({
  secretRef: SecretKeyRef.describe('Where the secret access key is kept'),
});
export type RemoteSpec = z.infer<typeof RemoteSpec>;
