import {
  ApiKeyRecord,
  CartridgeSpec,
  SessionRecord,
  Settings,
  UserRecord,
  DataplaneSpec,
  InitiatorRecord,
  Job,
  LibrarySpec,
  LibraryStatus,
  NodeLibraryStatus,
  NodeRecord,
  type NodeStatus,
  assembleNodeStatus,
  PoolSpec,
  PoolStatus,
  ROOT,
  VtlError,
  keys,
} from '@vtl/api';
import type { Store, Versioned, WatchCache } from '@vtl/store';
import type { Snapshot } from '@vtl/domain';
import { SourceStatus } from '@vtl/gitops';
import type { z } from 'zod';
import { RevisionWindow } from './revision-window.js';

/** How long a read waits for the cache to reach this process's own latest write. */
export const READ_YOUR_WRITES_MS = 5_000;

const PREFIXES = {
  libraries: { prefix: keys.libraries.prefix, schema: LibrarySpec },
  libraryStatus: { prefix: keys.libraryStatus.prefix, schema: LibraryStatus },
  pools: { prefix: keys.pools.prefix, schema: PoolSpec },
  poolStatus: { prefix: keys.poolStatus.prefix, schema: PoolStatus },
  nodes: { prefix: keys.nodeStatus.prefix, schema: NodeRecord },
  nodeLibraries: { prefix: keys.nodeLibraryStatus.prefix, schema: NodeLibraryStatus },
  cartridges: { prefix: keys.cartridges.prefix, schema: CartridgeSpec },
  jobs: { prefix: keys.jobs.prefix, schema: Job },
  initiators: { prefix: keys.initiators.prefix, schema: InitiatorRecord },
  dataplane: { prefix: keys.dataplane, schema: DataplaneSpec },
  // Credentials, so a request is authenticated without a store round trip (see get()).
  users: { prefix: keys.users.prefix, schema: UserRecord },
  sessions: { prefix: keys.sessions.prefix, schema: SessionRecord },
  apiKeys: { prefix: keys.apiKeys.prefix, schema: ApiKeyRecord },
  settings: { prefix: keys.settings, schema: Settings },
  // GitOps sources' outcomes, for the status view's `gitops` (docs/gitops.md).
  gitopsStatus: { prefix: keys.gitopsSourceStatus.prefix, schema: SourceStatus },
} satisfies Record<string, { prefix: string; schema: z.ZodType<unknown> }>;

const PREFIX_LIST = Object.values(PREFIXES);

/**
 * The read views' records, from one watch cache instead of etcd per request. Everything
 * derived from the records (the snapshot, serialized view bodies) is memoised per cache
 * version and recomputed on the first read after a change, so a busy view between changes
 * costs what serving stored bytes costs.
 */
export class ViewCache {
  private version = 0;
  private readonly memos = new Map<string, { version: number; value: unknown }>();

  private constructor(
    private readonly store: Store,
    private readonly cache: WatchCache,
  ) {
    cache.onChange((change) => {
      if (change) this.checked.delete(change.key);
      else this.checked.clear();
      if (change?.prefix === PREFIXES.nodes.prefix && !this.nodeShownChange(change.key)) return;
      this.version++;
    });
    this.revisions = new RevisionWindow(() => store.currentRevision());
  }

  /** Each node record as the views show it: everything but its `updated_at`. */
  private readonly shownNodes = new Map<string, string | undefined>();

  /**
   * Whether a node record changed in what a view shows. The nodeagent rewrites its record with
   * a new `updated_at` every second or two while nothing else changes; no view shows that
   * field, and counting it as a change rebuilt every memoised view (16 libraries' status
   * fragments, 6,400 cartridges serialized) that often, which under load cost more CPU than
   * the requests themselves.
   */
  private nodeShownChange(key: string): boolean {
    const item = this.cache.items<NodeRecord>(PREFIXES.nodes.prefix).get(key);
    const shown = item ? JSON.stringify({ ...item.value, updated_at: undefined }) : undefined;
    const before = this.shownNodes.get(key);
    if (shown === undefined) this.shownNodes.delete(key);
    else this.shownNodes.set(key, shown);
    return !this.shownNodes.has(key) || before !== shown || before === undefined;
  }

  static async start(store: Store): Promise<ViewCache> {
    return new ViewCache(store, await store.watchCache(ROOT, Object.values(PREFIXES)));
  }

  private readonly revisions: RevisionWindow;

  /**
   * Reads from the cache at a known store revision, as the Kubernetes apiserver's consistent
   * reads from its cache: the store's current revision (RevisionWindow: one small bounded read
   * shared by every request of a 50 ms window), then wait until the cache has reached it and
   * this process's own newest write or observed result (read-your-writes). A view is then never
   * older than a write this apiserver answered or an operation result it saw, nor than any write
   * answered more than the window before the request came; with the store stalled the answer is
   * 503 `unavailable` within the store deadline instead of cached data of unknown age.
   *
   * `since` is when the request arrived (performance.now()); `strict` asks for a revision read
   * begun after it (no window).
   */
  async fresh(since = performance.now(), strict = false): Promise<this> {
    const current = await this.revisions.revision(since, strict);
    const want = BigInt(current) > BigInt(this.store.seenRevision) ? current : this.store.seenRevision;
    if (await this.cache.reached(want, READ_YOUR_WRITES_MS)) return this;
    throw new VtlError(
      'unavailable',
      `The view cache is behind the store (at revision ${this.cache.revision}, wanted ${want}); retry shortly.`,
      { retry_after_sec: 1 },
    );
  }

  /**
   * fresh() without waiting, for the fast path of the cached views (plugins/view-fast-path.ts):
   * true when a revision read that serves a request arrived at `since` has completed and the
   * cache has reached both it and this process's own newest write, the very condition fresh()
   * waits for. False means "not known yet", never "stale": the caller then takes fresh().
   */
  freshNow(since: number): boolean {
    const current = this.revisions.peek(since);
    if (current === undefined) return false;
    // Parsed once per revision read, not per request.
    if (current !== this.peeked.text) this.peeked = { text: current, value: BigInt(current) };
    const seen = this.cache.revisionValue;
    return seen >= this.peeked.value && seen >= this.store.seenRevisionValue;
  }

  /** The revision freshNow last compared, parsed. */
  private peeked = { text: '', value: 0n };

  /** The records as one Snapshot, rebuilt only after a change. */
  snapshot(): Snapshot {
    return this.memo('snapshot', () => {
      // Sorted by key, as a listing from etcd would be.
      const values = <T>(p: { prefix: string }) =>
        [...this.cache.items<T>(p.prefix).values()]
          .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
          .map((i) => i.value);
      const libraryStatus = values<LibraryStatus>(PREFIXES.libraryStatus);
      const poolStatus = values<PoolStatus>(PREFIXES.poolStatus);
      return {
        libraries: values<LibrarySpec>(PREFIXES.libraries),
        libraryStatus: new Map(libraryStatus.map((s) => [s.id, s])),
        pools: values<PoolSpec>(PREFIXES.pools),
        poolStatus: new Map(poolStatus.map((s) => [s.id, s])),
        nodes: assembleNodeStatus(
          values<NodeRecord>(PREFIXES.nodes),
          values<NodeLibraryStatus>(PREFIXES.nodeLibraries),
        ),
        cartridges: values<CartridgeSpec>(PREFIXES.cartridges),
        jobs: values<Job>(PREFIXES.jobs),
        dataplane: this.cache.items<DataplaneSpec>(keys.dataplane).get(keys.dataplane)?.value,
      };
    });
  }

  /**
   * Labels of one library's cartridges that a reporting node serves, from that library's node
   * records alone: what a mint polls for without rebuilding the whole snapshot (6,400
   * cartridges sorted) after every record the mint itself changes.
   */
  observedLabels(library: number): ReadonlySet<string> {
    return this.memo(`observed-labels-${library}`, () => {
      const nodes = this.cache.items<NodeRecord>(PREFIXES.nodes.prefix);
      const reporting = new Set([...nodes.values()].map((n) => n.value.node));
      const out = new Set<string>();
      for (const { value } of this.cache.items<NodeLibraryStatus>(PREFIXES.nodeLibraries.prefix).values())
        if (value.id === library && reporting.has(value.node))
          for (const c of value.cartridges) out.add(c.label);
      return out;
    });
  }

  /** Each GitOps source's applied revision and outcome, by source name. */
  gitopsStatus(): { source: string; applied_revision: string; outcome: string; last_poll_at: string }[] {
    return this.memo('gitops-status', () =>
      [...this.cache.items<SourceStatus>(PREFIXES.gitopsStatus.prefix).entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([key, { value }]) => ({
          source: key.slice(PREFIXES.gitopsStatus.prefix.length),
          applied_revision: value.applied_revision,
          outcome: value.outcome,
          last_poll_at: value.last_poll_at,
        })),
    );
  }

  /** Every node's record (data plane, fabric) without its libraries: what the targets view reads. */
  nodeRecords(): NodeStatus[] {
    return this.memo('node-records', () =>
      assembleNodeStatus(
        [...this.cache.items<NodeRecord>(PREFIXES.nodes.prefix).values()].map((i) => i.value),
        [],
      ),
    );
  }

  /** The declared libraries, unsorted. */
  libraryRecords(): LibrarySpec[] {
    return this.memo('library-records', () =>
      [...this.cache.items<LibrarySpec>(PREFIXES.libraries.prefix).values()].map((i) => i.value),
    );
  }

  /** What the targets view depends on: node records, initiators and libraries, by revision. */
  targetsFingerprint(): string {
    return this.memo('targets-fingerprint', () =>
      [PREFIXES.nodes.prefix, PREFIXES.initiators.prefix, PREFIXES.libraries.prefix]
        .map((p) => [...this.cache.items(p).values()].map((i) => i.modRevision).join(','))
        .join('|'),
    );
  }

  /** The initiator registry. */
  initiators(): InitiatorRecord[] {
    return this.memo('initiators', () =>
      [...this.cache.items<InitiatorRecord>(PREFIXES.initiators.prefix).values()].map((i) => i.value),
    );
  }

  /**
   * What a library's status fragment depends on, as a string: its record, its pool, its status, every
   * node's status and its cartridges (count and newest change). Equal strings, equal fragment.
   */
  libraryFingerprint(lib: LibrarySpec): string {
    const rev = (prefix: string, key: string) => this.cache.items(prefix).get(key)?.modRevision ?? '-';
    const carts = this.memo('cartridge-revisions', () => {
      const out = new Map<number, { count: number; newest: bigint }>();
      for (const c of this.cache.items<CartridgeSpec>(PREFIXES.cartridges.prefix).values()) {
        const seen = out.get(c.value.library) ?? { count: 0, newest: 0n };
        seen.count++;
        const r = BigInt(c.modRevision);
        if (r > seen.newest) seen.newest = r;
        out.set(c.value.library, seen);
      }
      return out;
    });
    // Every node's records, its per-library ones included: a fragment shows the node's data plane.
    const nodes = this.memo('node-revisions', () =>
      [PREFIXES.nodes.prefix, PREFIXES.nodeLibraries.prefix]
        .flatMap((p) => [...this.cache.items(p).values()].map((n) => n.modRevision))
        .join(','),
    );
    const c = carts.get(lib.id);
    return [
      rev(PREFIXES.libraries.prefix, keys.libraries.one(lib.id)),
      rev(PREFIXES.pools.prefix, keys.pools.one(lib.home_pool)),
      // Its lifecycle status: the fragment shows its phase and conditions.
      rev(PREFIXES.libraryStatus.prefix, keys.libraryStatus.one(lib.id)),
      nodes,
      c ? `${c.count}@${c.newest}` : '0',
    ].join('|');
  }

  /**
   * What the cartridge list (§2.7) depends on, as a string: the cartridge records (count and
   * newest change), which nodes report and their per-library records. Equal strings, equal
   * list: a pool's figures or a library's status changing (every second or so under load) no
   * longer re-serializes 6,400 cartridges.
   */
  cartridgesFingerprint(): string {
    return this.memo('cartridges-fingerprint', () => {
      let count = 0;
      let newest = 0n;
      for (const c of this.cache.items(PREFIXES.cartridges.prefix).values()) {
        count++;
        const r = BigInt(c.modRevision);
        if (r > newest) newest = r;
      }
      const nodes = [...this.cache.items(PREFIXES.nodes.prefix).keys()].join(',');
      const libraries = [...this.cache.items(PREFIXES.nodeLibraries.prefix).values()]
        .map((i) => i.modRevision)
        .join(',');
      return `${count}@${newest}|${nodes}|${libraries}`;
    });
  }

  /**
   * One record, read like Store.get (for the credential lookups): from the cache when its
   * prefix is cached (the caller's schema checked again), from the store otherwise. A miss is
   * checked again at a revision read after the call, so a record created by another process
   * just before (a session, an API key) is never refused for the window's sake.
   */
  async get<T>(key: string, schema: z.ZodType<T>): Promise<Versioned<T> | undefined> {
    const p = PREFIX_LIST.find((c) => key.startsWith(c.prefix));
    if (!p) return this.store.get(key, schema);
    let hit = this.cache.items(p.prefix).get(key);
    if (!hit) {
      // Not in a view up to a window old: perhaps just created elsewhere (a login answered by
      // another apiserver). Look again at a revision read after now before saying it is unknown.
      await this.fresh(performance.now(), true);
      hit = this.cache.items(p.prefix).get(key);
      if (!hit) return undefined;
    }
    return this.checkedHit(key, hit, schema);
  }

  /**
   * get() of a record the cache holds, without waiting: undefined when it is not cached (not
   * "unknown": only get() may say that, after its look at a newer revision).
   */
  cached<T>(key: string, schema: z.ZodType<T>): Versioned<T> | undefined {
    const p = PREFIX_LIST.find((c) => key.startsWith(c.prefix));
    const hit = p && this.cache.items(p.prefix).get(key);
    return hit ? this.checkedHit(key, hit, schema) : undefined;
  }

  private checkedHit<T>(
    key: string,
    hit: Versioned<unknown>,
    schema: z.ZodType<T>,
  ): Versioned<T> | undefined {
    // Checked once per record version and schema, not once per request (a credential check
    // reads a session and its user on every request).
    const seen = this.checked.get(key);
    if (seen && seen.item === hit && seen.schema === schema) return seen.result as Versioned<T> | undefined;
    const parsed = schema.safeParse(hit.value);
    const result = parsed.success ? { ...hit, value: parsed.data } : undefined;
    this.checked.set(key, { item: hit, schema, result });
    return result;
  }

  /** get()'s checked records: the cache entry they came from (replaced on every change) and schema. */
  private readonly checked = new Map<
    string,
    { item: Versioned<unknown>; schema: z.ZodType<unknown>; result: Versioned<unknown> | undefined }
  >();

  /** The newest store revision the cache reflects. */
  get revision(): string {
    return this.cache.revision;
  }

  /** Resolves true once the cache has seen `revision` (false after timeoutMs). */
  reached(revision: string, timeoutMs: number): Promise<boolean> {
    return this.cache.reached(revision, timeoutMs);
  }

  /** Calls fn after every change of a cached record; returns the unsubscribe function. */
  onChange(fn: () => void): () => void {
    return this.cache.onChange(fn);
  }

  /** compute()'s value, computed again only after the records changed. */
  memo<T>(name: string, compute: () => T): T {
    const hit = this.memos.get(name);
    if (hit && hit.version === this.version) return hit.value as T;
    const value = compute();
    this.memos.set(name, { version: this.version, value });
    return value;
  }

  /**
   * Like memo, for parts keyed by their own inputs (e.g. one library's fragment): recomputed
   * when `fingerprint` differs from the one it was computed for, whatever else changed.
   */
  part<T>(name: string, fingerprint: string, compute: () => T): T {
    const hit = this.parts.get(name);
    if (hit && hit.fingerprint === fingerprint) return hit.value as T;
    const value = compute();
    this.parts.set(name, { fingerprint, value });
    return value;
  }

  private readonly parts = new Map<string, { fingerprint: string; value: unknown }>();

  close(): Promise<void> {
    return this.cache.close();
  }
}
