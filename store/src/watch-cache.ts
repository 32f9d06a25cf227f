import type { IKeyValue } from 'etcd3';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { addRevision, decodeKvOrSkip, type Versioned } from './codec.js';
import { relistUntilDone } from './relist.js';
import type { Watch, WatchEvent, WatchOptions } from './watch.js';

/** One prefix a WatchCache holds, with the schema its records must pass. */
export interface CachedPrefix {
  prefix: string;
  schema: z.ZodType<unknown>;
}

/** The store operations a WatchCache needs. */
export interface WatchCacheSource {
  list(prefix: string, revision?: string): Promise<{ kvs: IKeyValue[]; revision: string }>;
  watch(prefix: string, opts: WatchOptions, onEvent: (e: WatchEvent) => void): Promise<Watch>;
}

/** What changed: a key under a cached prefix, or `undefined` for "everything" (after a re-list). */
export type CacheChange = { prefix: string; key: string } | undefined;

/**
 * An in-memory copy of several prefixes kept by ONE watch of their common root, as the
 * Kubernetes apiserver's watch cache does: list every prefix at one revision, then watch the
 * root from the next one. One watch gives one revision line, so "has the cache seen revision
 * R?" has an exact answer and a reader can wait for its own write (read-your-writes). When the
 * watch cannot continue (history compacted) everything is re-listed and listeners are told
 * that everything changed. Records under the root but outside the prefixes only move the
 * revision on.
 */
export class WatchCache implements Watch {
  private readonly maps = new Map<string, Map<string, Versioned<unknown>>>();
  private seen = 0n;
  private watch: Watch | undefined;
  private generation = 0;
  private closed = false;
  private relisting: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private readonly waiters = new Set<{ revision: bigint; resolve: () => void }>();
  private readonly listeners = new Set<(change: CacheChange) => void>();

  private constructor(
    private readonly source: WatchCacheSource,
    private readonly log: Logger,
    private readonly root: string,
    private readonly prefixes: CachedPrefix[],
  ) {
    for (const p of prefixes) {
      if (!p.prefix.startsWith(root)) throw new Error(`${p.prefix} is not under the watched root ${root}`);
      this.maps.set(p.prefix, new Map());
    }
  }

  static async start(
    source: WatchCacheSource,
    log: Logger,
    root: string,
    prefixes: CachedPrefix[],
  ): Promise<WatchCache> {
    const cache = new WatchCache(source, log, root, prefixes);
    const revision = await cache.listAll();
    await cache.watchFrom(addRevision(revision, 1));
    return cache;
  }

  /** The cached records of one prefix (live: do not modify). */
  items<T>(prefix: string): ReadonlyMap<string, Versioned<T>> {
    const map = this.maps.get(prefix);
    if (!map) throw new Error(`${prefix} is not cached`);
    return map as Map<string, Versioned<T>>;
  }

  /** The newest revision the cache reflects. */
  get revision(): string {
    return this.seen.toString();
  }

  /** revision as a number, for comparisons on a hot path (no string round trip). */
  get revisionValue(): bigint {
    return this.seen;
  }

  /** Calls fn after every change of a cached record; returns the unsubscribe function. */
  onChange(fn: (change: CacheChange) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Resolves true once the cache has seen `revision`, false after timeoutMs. */
  reached(revision: string, timeoutMs: number): Promise<boolean> {
    const want = BigInt(revision);
    if (this.seen >= want) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        revision: want,
        resolve: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.generation++;
    this.wake?.();
    await this.relisting?.catch(() => undefined);
    await this.watch?.close();
  }

  /** Lists every prefix at one revision and replaces the maps; returns that revision. */
  private async listAll(): Promise<string> {
    let revision: string | undefined;
    const fresh = new Map<string, Map<string, Versioned<unknown>>>();
    for (const p of this.prefixes) {
      const listed = await this.source.list(p.prefix, revision);
      revision ??= listed.revision;
      const map = new Map<string, Versioned<unknown>>();
      for (const kv of listed.kvs) {
        const item = decodeKvOrSkip(kv, p.schema, this.log);
        if (item) map.set(item.key, item);
      }
      fresh.set(p.prefix, map);
    }
    if (revision === undefined) revision = (await this.source.list(this.root)).revision;
    for (const [prefix, map] of fresh) this.maps.set(prefix, map);
    this.advance(BigInt(revision));
    return revision;
  }

  private async watchFrom(fromRevision: string): Promise<void> {
    const generation = ++this.generation;
    const watch = await this.source.watch(
      this.root,
      {
        fromRevision,
        onError: () => this.relist(generation),
        onProgress: (rev) => {
          if (generation === this.generation) this.advance(BigInt(rev));
        },
      },
      (e) => {
        if (generation === this.generation) this.apply(e);
      },
    );
    if (generation !== this.generation) await watch.close();
    else this.watch = watch;
  }

  private apply(e: WatchEvent): void {
    const p = this.prefixes.find((c) => e.key.startsWith(c.prefix));
    if (p) {
      const map = this.maps.get(p.prefix)!;
      if (e.type === 'delete') {
        if (map.delete(e.key)) this.notify({ prefix: p.prefix, key: e.key });
      } else {
        const parsed = p.schema.safeParse(e.value);
        if (parsed.success) {
          map.set(e.key, {
            key: e.key,
            value: parsed.data,
            modRevision: e.modRevision,
            createRevision: e.createRevision,
          });
        } else {
          this.log.warn(
            { key: e.key, issues: parsed.error.issues },
            'skipping a record that fails its schema',
          );
          map.delete(e.key);
        }
        this.notify({ prefix: p.prefix, key: e.key });
      }
    }
    this.advance(BigInt(e.modRevision));
  }

  private advance(revision: bigint): void {
    if (revision <= this.seen) return;
    this.seen = revision;
    for (const w of this.waiters) if (w.revision <= revision) w.resolve();
  }

  private notify(change: CacheChange): void {
    for (const fn of this.listeners) {
      try {
        fn(change);
      } catch (err) {
        this.log.error({ err }, 'watch cache listener threw');
      }
    }
  }

  private relist(generation: number): void {
    if (this.closed || generation !== this.generation || this.relisting) return;
    this.generation++;
    this.relisting = this.relistUntilDone().finally(() => (this.relisting = undefined));
  }

  private relistUntilDone(): Promise<void> {
    return relistUntilDone({
      closed: () => this.closed,
      attempt: async () => {
        const revision = await this.listAll();
        if (this.closed) return;
        this.notify(undefined);
        await this.watchFrom(addRevision(revision, 1));
        this.log.info({ root: this.root, revision }, 'watch cache re-listed after its watch ended');
      },
      failed: (err) => this.log.warn({ err, root: this.root }, 'watch cache re-list failed; retrying'),
      setWake: (wake) => (this.wake = wake),
    });
  }
}
