import type {
  ManagedBy,
  InitiatorChapSecret,
  InitiatorRecord,
  LibrarySpec,
  LibraryState,
  PoolSpec,
  RemoteRecord,
} from '@vtl/api';

/**
 * What the appliance holds, as the planner sees it: the records of etcd (read by the apiserver)
 * and the secret values it compares in memory. Nothing here is ever put in a plan's output.
 */
export interface Observed {
  pools: (PoolSpec & { active: boolean })[];
  libraries: (LibrarySpec & { state: LibraryState })[];
  initiators: InitiatorRecord[];
  remotes: RemoteRecord[];
  settings: Record<string, string>;
  /** The source whose ApplianceSettings are applied (settings have no record to carry managed_by). */
  settingsOwner?: ManagedBy;
  /** Secrets registered for `secretRef`: name → key → value. */
  secrets: Record<string, Record<string, string>>;
  /** A remote's stored secret access key, by remote id. */
  remoteSecrets: Record<number, string>;
  /** An initiator's stored CHAP set-up, by registry name. */
  chapSecrets: Record<string, InitiatorChapSecret>;
}

export const emptyObserved = (): Observed => ({
  pools: [],
  libraries: [],
  initiators: [],
  remotes: [],
  settings: {},
  secrets: {},
  remoteSecrets: {},
  chapSecrets: {},
});
