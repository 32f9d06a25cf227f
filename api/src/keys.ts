/**
 * The one place that defines the etcd key space. Every process reads and writes records
 * only through these helpers, so a rename happens here and nowhere else.
 */
export const ROOT = '/vtl/';

const pad = (n: number) => String(n).padStart(12, '0');

export const keys = {
  pools: { prefix: `${ROOT}spec/pools/`, one: (id: number) => `${ROOT}spec/pools/${pad(id)}` },
  libraries: { prefix: `${ROOT}spec/libraries/`, one: (id: number) => `${ROOT}spec/libraries/${pad(id)}` },
  cartridges: {
    prefix: `${ROOT}spec/cartridges/`,
    one: (label: string) => `${ROOT}spec/cartridges/${label}`,
  },
  initiators: { prefix: `${ROOT}spec/initiators/`, one: (wwpn: string) => `${ROOT}spec/initiators/${wwpn}` },
  remotes: { prefix: `${ROOT}spec/remotes/`, one: (id: number) => `${ROOT}spec/remotes/${pad(id)}` },

  /** Controller-owned library lifecycle status (state, phase, conditions), written by CAS. */
  libraryStatus: {
    prefix: `${ROOT}status/libraries/`,
    one: (id: number) => `${ROOT}status/libraries/${pad(id)}`,
  },
  /** Nodeagent-owned pool figures, written under the nodeagent's lease. */
  poolStatus: { prefix: `${ROOT}status/pools/`, one: (id: number) => `${ROOT}status/pools/${pad(id)}` },
  /** Shared storage of one node (docs/storage.md): the devices it should span, written by the apiserver. */
  storage: { prefix: `${ROOT}spec/storage/`, one: (node: string) => `${ROOT}spec/storage/${node}` },
  /** What the node's storage is (mounted, devices, dedup pass), written by its nodeagent; not leased. */
  storageStatus: {
    prefix: `${ROOT}status/storage/`,
    one: (node: string) => `${ROOT}status/storage/${node}`,
  },
  /** Nodeagent-owned live view of one node (data plane, fabric), leased; its libraries are apart. */
  nodeStatus: { prefix: `${ROOT}status/nodes/`, one: (node: string) => `${ROOT}status/nodes/${node}` },
  /**
   * Nodeagent-owned heartbeat of one node, leased with its status: rewritten every few seconds by
   * the status loop even when nothing changed, so a node whose lease is still kept alive but whose
   * status loop hangs is seen (the library reconciler's staleness check). Apart from the node
   * record so the views that watch that record are not rebuilt on every beat.
   */
  nodeHeartbeat: {
    prefix: `${ROOT}status/node-heartbeats/`,
    one: (node: string) => `${ROOT}status/node-heartbeats/${node}`,
  },
  /**
   * Nodeagent-owned live view of one library served on one node (drives, slots, cartridges),
   * leased with the node record: a change in one library rewrites only its own record.
   */
  nodeLibraryStatus: {
    prefix: `${ROOT}status/node-libraries/`,
    node: (node: string) => `${ROOT}status/node-libraries/${node}/`,
    one: (node: string, id: number) => `${ROOT}status/node-libraries/${node}/${pad(id)}`,
  },

  jobs: { prefix: `${ROOT}jobs/`, one: (id: number) => `${ROOT}jobs/${pad(id)}` },
  ops: { prefix: `${ROOT}ops/`, one: (id: number) => `${ROOT}ops/${pad(id)}` },
  /** A result too big for its op record (a bucket listing), in parts; the reader deletes them. */
  opResults: {
    prefix: `${ROOT}op-results/`,
    of: (id: number) => `${ROOT}op-results/${pad(id)}/`,
    part: (id: number, n: number) => `${ROOT}op-results/${pad(id)}/${pad(n)}`,
  },
  catalog: {
    prefix: `${ROOT}catalog/`,
    /** Every generation of one remote. */
    remote: (remote: number) => `${ROOT}catalog/${pad(remote)}/`,
    one: (remote: number, system: string, serial: string, label: string, generation: string) =>
      `${ROOT}catalog/${pad(remote)}/${system}/${serial}/${label}/${generation}`,
  },
  /** A remote's secret key, apart from its record so listing remotes never reads it. */
  remoteSecrets: {
    prefix: `${ROOT}secrets/remotes/`,
    one: (id: number) => `${ROOT}secrets/remotes/${pad(id)}`,
  },
  /** An iSCSI initiator's CHAP secrets, apart from its record so listing initiators never reads them. */
  initiatorSecrets: {
    prefix: `${ROOT}secrets/initiators/`,
    one: (name: string) => `${ROOT}secrets/initiators/${name}`,
  },
  /** Secrets that declared objects name by `secretRef` (docs/gitops.md): write-only, sealed at rest. */
  gitopsSecrets: {
    prefix: `${ROOT}secrets/gitops/`,
    one: (name: string) => `${ROOT}secrets/gitops/${name}`,
  },
  /** A Git source's credential and webhook secret, sealed at rest, never returned. */
  gitopsSourceSecrets: {
    prefix: `${ROOT}secrets/gitops-sources/`,
    one: (name: string) => `${ROOT}secrets/gitops-sources/${name}`,
  },
  /** Git sources (what to fetch) and their status (what was applied), apart so a poll never rewrites the spec. */
  gitopsSources: { prefix: `${ROOT}gitops/sources/`, one: (name: string) => `${ROOT}gitops/sources/${name}` },
  gitopsSourceStatus: {
    prefix: `${ROOT}gitops/status/`,
    one: (name: string) => `${ROOT}gitops/status/${name}`,
  },
  /** Which source manages ApplianceSettings (one object, so one source): a ManagedBy. */
  gitopsSettingsOwner: `${ROOT}gitops/settings-owner`,
  /** A webhook's request for an early poll of one source: the controller watches these. */
  gitopsPollRequests: { prefix: `${ROOT}gitops/poll/`, one: (name: string) => `${ROOT}gitops/poll/${name}` },
  /** Service principals' keys (the controller's GitOps applier), stored as SHA-256 like API keys. */
  serviceKeys: {
    prefix: `${ROOT}auth/service-keys/`,
    one: (name: string) => `${ROOT}auth/service-keys/${name}`,
  },
  /** The host boot a node's jobs last ran under: a different one at start means the host rebooted. */
  jobBoot: (node: string) => `${ROOT}system/job-boot/${node}`,
  /** Verified chunks of an export job (its resumable ledger). */
  jobLedgers: { prefix: `${ROOT}job-ledgers/`, one: (id: number) => `${ROOT}job-ledgers/${pad(id)}` },
  events: { prefix: `${ROOT}events/`, one: (seq: number) => `${ROOT}events/${pad(seq)}` },
  audit: { prefix: `${ROOT}audit/`, one: (seq: number) => `${ROOT}audit/${pad(seq)}` },

  /** Users by name, sessions by SHA-256 of their token, API keys by id (stored hashed). */
  users: { prefix: `${ROOT}auth/users/`, one: (name: string) => `${ROOT}auth/users/${name}` },
  sessions: { prefix: `${ROOT}auth/sessions/`, one: (hash: string) => `${ROOT}auth/sessions/${hash}` },
  apiKeys: { prefix: `${ROOT}auth/apikeys/`, one: (id: number) => `${ROOT}auth/apikeys/${pad(id)}` },
  /** Written with the first admin: its presence means the first start is done. */
  authBootstrap: `${ROOT}auth/bootstrap`,
  /** The acknowledged support fingerprint (§2.12). */
  license: `${ROOT}system/license`,

  settings: `${ROOT}settings`,
  /** Appliance identity: system UUID created once. */
  identity: `${ROOT}system/identity`,
  /** What the data plane should serve: bumped by apply / data-plane restart. */
  dataplane: `${ROOT}system/dataplane`,
  /** Control-plane drain state (graceful restart). */
  drain: `${ROOT}system/drain`,
  /** The latest control-plane restart request: every control-plane process exits on a newer one. */
  restartRequest: `${ROOT}system/restart-request`,
  /**
   * Signed updates (§4.3): the update in flight, the last good one (what rollback reverts) and
   * how the last one ended. Kept out of the store snapshot an update restores.
   */
  update: {
    prefix: `${ROOT}system/update/`,
    pending: `${ROOT}system/update/pending`,
    lastGood: `${ROOT}system/update/last-good`,
    lastResult: `${ROOT}system/update/last-result`,
  },
  /**
   * An update or rollback the apiserver accepted (an UpdateRecord without an updater yet): the
   * updater it starts takes it over as `update.pending`, in one transaction that removes it.
   * Also kept out of the store snapshot an update restores.
   */
  updateRequest: `${ROOT}system/update-request`,
  /** Atomic integer id counters. */
  counter: (name: string) => `${ROOT}system/counters/${name}`,
  /** The one nodeagent serving a node, leased: a second one for the same node waits for it. */
  nodeagentClaim: (node: string) => `${ROOT}system/nodeagents/${node}`,
  /** Election prefix for the controller. */
  controllerElection: `${ROOT}system/election/controller`,
  /** Name index so two pools can never share a name. */
  poolName: (name: string) => `${ROOT}system/names/pools/${name}`,
  /** Claim of a pool by the one library it homes (declare and pool delete race on it). */
  poolHome: (poolId: number) => `${ROOT}system/names/pool-home/${pad(poolId)}`,
  /**
   * The job that holds a cartridge label: job admission, retry and cartridge delete compare it
   * in their transaction, so two requests can never both start work on one label.
   */
  jobLabel: (label: string) => `${ROOT}system/names/job-labels/${label}`,
  /**
   * The apply, data-plane restart or library delete in flight (domain/src/records/exclusive-op.ts): job
   * admission and retry compare it, so no job starts while one runs.
   */
  exclusiveOp: `${ROOT}system/names/exclusive-op`,
  /** Short-lived leased locks serialising read-decide-write sequences (e.g. mint per library). */
  lock: (name: string) => `${ROOT}system/locks/${name}`,
  /** Library serials are unique on an appliance (recover refuses an existing one). */
  librarySerial: (serial: string) => `${ROOT}system/names/library-serials/${serial}`,
} as const;

/** Parses the numeric id at the end of a key written by `keys.*.one(id)`. */
export function idFromKey(key: string): number {
  const last = key.slice(key.lastIndexOf('/') + 1);
  return Number.parseInt(last, 10);
}

/** The last path segment of a key. */
export function nameFromKey(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

/**
 * Who writes each key family: the process, and the one module that holds its writes (a
 * put/create/update/delete of its keys) and their rules. key-ownership.test.ts fails on any write
 * outside these, and docs/architecture.md's owner table is generated from this one.
 */
export interface KeyOwner {
  process: string;
  module: string;
  /**
   * The few other modules that write the family by design, each with what it writes and why that
   * write cannot sit in the owner module: a removal that must share the transaction of the record
   * it belongs to, or a process or package that may not load the owner module.
   */
  also?: Record<string, string>;
}

export const KEY_OWNERS: Record<keyof typeof keys, KeyOwner> = {
  pools: {
    process: 'apiserver; nodeagent (the default pool, once on first start)',
    module: 'domain/src/records/pools.ts',
  },
  libraries: {
    process: 'apiserver (declare), controller (recover, delete)',
    module: 'domain/src/records/libraries.ts',
  },
  cartridges: {
    process:
      'apiserver (mint, delete mark), nodeagent (import, export, removal), controller (library delete)',
    module: 'domain/src/records/cartridges.ts',
  },
  initiators: {
    process: 'apiserver',
    module: 'domain/src/records/initiators.ts',
  },
  remotes: {
    process: 'apiserver; controller (the result of a check)',
    module: 'domain/src/records/remotes.ts',
  },
  libraryStatus: {
    process: 'controller',
    module: 'controller/src/library/library-reconciler.ts',
    also: {
      'domain/src/records/libraries.ts':
        'removal in the transaction that removes its library, so no status outlives the library',
    },
  },
  poolStatus: { process: "nodeagent (of the pool's node)", module: 'domain/src/records/pools.ts' },
  storage: {
    process: 'apiserver; nodeagent (removal after the teardown)',
    module: 'domain/src/records/storage.ts',
  },
  storageStatus: {
    process: 'nodeagent',
    module: 'nodeagent/src/storage/storage-reconciler.ts',
    also: {
      'domain/src/records/storage.ts':
        'removal in the transaction that removes the spec after the teardown, so neither outlives the other',
    },
  },
  nodeStatus: { process: 'nodeagent', module: 'nodeagent/src/dataplane/node-status.ts' },
  nodeHeartbeat: { process: 'nodeagent', module: 'nodeagent/src/dataplane/node-status.ts' },
  nodeLibraryStatus: { process: 'nodeagent', module: 'nodeagent/src/dataplane/node-status.ts' },
  jobs: {
    process: 'apiserver and controller policies (admitJob), controller (admission), nodeagent (progress)',
    module: 'domain/src/records/jobs.ts',
  },
  ops: {
    process: 'requester; state: the executor',
    module: 'domain/src/records/ops.ts',
    also: {
      'reconcile/src/op-runner.ts':
        "the executor's claim (running), steps and outcome: the op runner is the reconciler runtime, which the package map keeps below domain",
    },
  },
  opResults: {
    process:
      'controller (a bucket listing); removal: their reader (apiserver) or the op collector (controller)',
    module: 'domain/src/records/ops.ts',
  },
  catalog: {
    process: 'controller (scans); nodeagent (export); apiserver (remote delete)',
    module: 'domain/src/records/catalog.ts',
  },
  remoteSecrets: {
    process: 'apiserver; seal:rotate (re-sealing under a new key)',
    module: 'domain/src/records/remotes.ts',
  },
  initiatorSecrets: {
    process: 'apiserver; seal:rotate (re-sealing under a new key)',
    module: 'domain/src/records/initiators.ts',
  },
  gitopsSecrets: {
    process: 'apiserver; seal:rotate (re-sealing under a new key)',
    module: 'domain/src/records/gitops-secrets.ts',
  },
  gitopsSourceSecrets: {
    process: 'apiserver; seal:rotate (re-sealing under a new key)',
    module: 'domain/src/records/gitops-secrets.ts',
  },
  gitopsSources: { process: 'apiserver', module: 'domain/src/records/gitops-sources.ts' },
  gitopsSourceStatus: {
    process: 'controller (the poller); apiserver (removal with its source)',
    module: 'domain/src/records/gitops-sources.ts',
  },
  gitopsSettingsOwner: {
    process: 'apiserver (GitOps apply)',
    module: 'apiserver/src/services/gitops-ownership.ts',
  },
  gitopsPollRequests: {
    process: 'apiserver (webhook; removal with its source); controller (removal once polled)',
    module: 'domain/src/records/gitops-sources.ts',
  },
  serviceKeys: { process: 'controller', module: 'controller/src/gitops/poller.ts' },
  jobBoot: { process: 'nodeagent', module: 'nodeagent/src/jobs/reboot-interrupt.ts' },
  jobLedgers: {
    process: 'nodeagent (verified chunks, removal on success); apiserver (removal on cancel)',
    module: 'domain/src/records/jobs.ts',
  },
  events: { process: 'every process, through the event journal', module: 'store/src/event-journal.ts' },
  audit: {
    process: 'apiserver (each request); updater (the outcome of an update or rollback)',
    module: 'store/src/audit-log.ts',
  },
  users: { process: 'apiserver', module: 'apiserver/src/services/users.ts' },
  sessions: { process: 'apiserver (login, logout, expiry)', module: 'apiserver/src/services/users.ts' },
  apiKeys: { process: 'apiserver', module: 'apiserver/src/services/api-keys.ts' },
  authBootstrap: { process: 'apiserver', module: 'apiserver/src/services/users.ts' },
  license: { process: 'apiserver', module: 'apiserver/src/services/license.ts' },
  settings: {
    process: 'apiserver',
    module: 'apiserver/src/services/settings.ts',
  },
  identity: { process: 'apiserver', module: 'apiserver/src/services/identity.ts' },
  dataplane: {
    process: 'controller (apply, data-plane restart, library delete)',
    module: 'domain/src/records/dataplane.ts',
  },
  drain: {
    process: 'apiserver (request); controller (drain reconciler)',
    module: 'domain/src/records/restart.ts',
  },
  restartRequest: {
    process: 'apiserver; controller (end of a drain); updater',
    module: 'domain/src/records/restart.ts',
    also: {
      'updater/src/update-writes.ts':
        'the restart into a new release or back: the updater depends on api, reconcile and store only (package map), not domain',
    },
  },
  update: {
    process: "updater (its run, and the settle run `main.js settle`, the apiserver's child)",
    module: 'updater/src/update-writes.ts',
  },
  updateRequest: {
    process: 'apiserver; removal: updater (taking it over, or settling one no updater took)',
    module: 'apiserver/src/services/system-update.ts',
    also: {
      'updater/src/update-writes.ts':
        'removal in the transaction that takes the request over as update.pending (so the two never both exist), or that settles a request no updater took: the apiserver writes nothing the updater owns',
    },
  },
  counter: {
    process: "every creator: in the record's transaction (Store.withNewId), or Store.nextId (logs)",
    module: 'store/src/store.ts',
  },
  nodeagentClaim: { process: 'nodeagent', module: 'nodeagent/src/node-claim.ts' },
  controllerElection: { process: 'controller', module: 'store/src/election.ts' },
  poolName: {
    process: 'apiserver; nodeagent (the default pool)',
    module: 'domain/src/records/pools.ts',
  },
  poolHome: {
    process: 'apiserver (declare), controller (recover, delete)',
    module: 'domain/src/records/libraries.ts',
  },
  jobLabel: { process: 'every job creator, through admitJob', module: 'domain/src/records/jobs.ts' },
  exclusiveOp: { process: 'apiserver; controller (recover)', module: 'domain/src/records/exclusive-op.ts' },
  lock: { process: 'apiserver', module: 'apiserver/src/services/lock.ts' },
  librarySerial: {
    process: 'apiserver (declare), controller (recover, delete)',
    module: 'domain/src/records/libraries.ts',
  },
};
