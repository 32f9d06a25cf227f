import { z } from 'zod';

/**
 * The sealed GitOps secrets (keys.gitopsSecrets, keys.gitopsSourceSecrets), here beside the
 * other sealed records' schemas so their owner module (domain/src/records/gitops-secrets.ts)
 * needs no GitOps model.
 */

/** A Git source's webhook secret and inline credential, apart so listing sources never reads them. */
export const GitSourceSecret = z.object({
  webhook_secret: z.string(),
  https_token: z.string().optional(),
  ssh_key: z.string().optional(),
  known_hosts: z.string().optional(),
});
export type GitSourceSecret = z.infer<typeof GitSourceSecret>;

/** A secret that declared objects name by `secretRef` (docs/gitops.md): its values, by key. */
export const StoredSecret = z.object({ data: z.record(z.string(), z.string()), updated_at: z.string() });
export type StoredSecret = z.infer<typeof StoredSecret>;
