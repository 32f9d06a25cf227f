import { z } from 'zod';
import { SourceSettings, SourceStatus } from './contract.js';

/**
 * The etcd records of GitOps (api/src/keys.ts gitops*): a source's spec, its sealed secrets (kept
 * apart so listing sources never reads them), its status, and the secrets `secretRef` names.
 */
export const GitSourceRecord = SourceSettings;
export type GitSourceRecord = z.infer<typeof GitSourceRecord>;

export const GitSourceSecret = z.object({
  webhook_secret: z.string(),
  https_token: z.string().optional(),
  ssh_key: z.string().optional(),
  known_hosts: z.string().optional(),
});
export type GitSourceSecret = z.infer<typeof GitSourceSecret>;

export const StoredSourceStatus = SourceStatus;
export const emptySourceStatus = (): SourceStatus => ({
  applied_revision: '',
  last_revision: '',
  outcome: 'never',
  message: 'Not polled yet.',
  errors: [],
  last_poll_at: '',
  last_applied_at: '',
  objects: [],
});

export const StoredSecret = z.object({ data: z.record(z.string(), z.string()), updated_at: z.string() });
export type StoredSecret = z.infer<typeof StoredSecret>;

export const PollRequest = z.object({ requested_at: z.string() });
export type PollRequest = z.infer<typeof PollRequest>;
