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
  assembleNodeStatus,
  PoolSpec,
  PoolStatus,
  ROOT,
  VtlError,
  keys,
} from '@vtl/api';
import type { Store, Versioned, WatchCache } from '@vtl/store';
import type { Snapshot } from '@vtl/domain';
import type { z } from 'zod';

/** How long a read waits for the cache to reach this process's own latest write. */
export const READ_YOUR_WRITES_MS = 5_000;
/** Revision reads (fresh()) in flight at once. */
const MAX_REVISION_READS = 2;

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
} satisfies Record<string, { prefix: string; schema: z.ZodType<unknown> }>;

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
    cache.onChange(() => this.version++);
  }

  static async start(store: Store): Promise<ViewCache> {
    return new ViewCache(store, await store.watchCache(ROOT, Object.values(PREFIXES)));
  }

  /**
   * Consistent reads from the cache, as the Kubernetes apiserver does them: ask etcd for its
   * current revision (one small bounded read, shared by the requests that arrive while it is in
   * flight) and wait until the cache has reached it. A view is then never older than any write
   * answered before the request came, this process's or another's; with the store stalled the
   * answer is 503 `unavailable` within the store deadline instead of cached data of unknown age.
   *
   * `since` is when the request arrived (performance.now()): any revision read that began after
   * it serves the request as well as a new one, so the route's read after the credential
   * check's costs no second round trip.
   */
  async fresh(since = performance.now()): Promise<this> {
    const done = this.lastRevision;
    const current = done && done.startedAt > since ? done.revision : await this.latestRevision(since);
    const want = BigInt(current) > BigInt(this.store.seenRevision) ? current : this.store.seenRevision;
    if (await this.cache.reached(want, READ_YOUR_WRITES_MS)) return this;
    throw new VtlError(
      'unavailable',
      `The view cache is behind the store (at revision ${this.cache.revision}, wanted ${want}); retry shortly.`,
      { retry_after_sec: 1 },
    );
  }

  /** Revision reads in flight, oldest first. */
  private readonly revisionReads: { startedAt: number; revision: Promise<string> }[] = [];
  /** The newest completed revision read and when it began. */
  private lastRevision: { startedAt: number; revision: string } | undefined;

  /**
   * The store's revision, read by a request that began after `since`. Callers share reads: one
   * joins a read in flight that began after it arrived, else starts one. Two may be in flight,
   * so a request that arrives while one is on its way waits one round trip, not the rest of
   * that read and a whole next one; beyond two, callers wait for a slot.
   */
  private latestRevision(since: number): Promise<string> {
    const joinable = this.revisionReads.find((r) => r.startedAt > since);
    if (joinable) return joinable.revision;
    if (this.revisionReads.length >= MAX_REVISION_READS)
      return Promise.race(this.revisionReads.map((r) => r.revision.catch(() => undefined))).then(() =>
        this.latestRevision(since),
      );
    const startedAt = performance.now();
    const read = {
      startedAt,
      revision: this.store
        .currentRevision()
        .then((revision) => {
          if (!this.lastRevision || this.lastRevision.startedAt < startedAt)
            this.lastRevision = { startedAt, revision };
          return revision;
        })
        .finally(() => this.revisionReads.splice(this.revisionReads.indexOf(read), 1)),
    };
    this.revisionReads.push(read);
    return read.revision;
  }

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
   * One record, read like Store.get (for the credential lookups): from the cache when its
   * prefix is cached (the caller's schema checked again), from the store otherwise.
   */
  async get<T>(key: string, schema: z.ZodType<T>): Promise<Versioned<T> | undefined> {
    const p = Object.values(PREFIXES).find((c) => key.startsWith(c.prefix));
    if (!p) return this.store.get(key, schema);
    const hit = this.cache.items(p.prefix).get(key);
    if (!hit) return undefined;
    const parsed = schema.safeParse(hit.value);
    return parsed.success ? { ...hit, value: parsed.data } : undefined;
  }

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
