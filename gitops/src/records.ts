import { z } from 'zod';
import { SourceSettings, SourceStatus } from './contract.js';

/**
 * The etcd records of GitOps (api/src/keys.ts gitops*): a source's spec, its status and a poll
 * request. The sealed secrets (a source's, and those `secretRef` names) are @vtl/api's
 * GitSourceSecret and StoredSecret.
 */
export const GitSourceRecord = SourceSettings;
export type GitSourceRecord = z.infer<typeof GitSourceRecord>;

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

export const PollRequest = z.object({ requested_at: z.string() });
export type PollRequest = z.infer<typeof PollRequest>;
