import type { Logger } from 'pino';
import type { z } from 'zod';
import { addRevision, type Versioned } from './codec.js';
import { relistUntilDone } from './relist.js';
import type { Watch, WatchEvent, WatchOptions } from './watch.js';

/** A cached, watched view of one prefix. */
export interface Informer<T> {
  /** The current cache, keyed by etcd key. */
  items(): Map<string, Versioned<T>>;
  /** One cached record, without copying the cache. */
  get(key: string): Versioned<T> | undefined;
  close(): Promise<void>;
}

/** What an informer tells its owner. */
export interface InformerHandler<T> {
  /** The first full listing (default: one onPut per item). */
  onSync?: (items: Versioned<T>[]) => void;
  onPut: (item: Versioned<T>) => void;
  /** `last` is the cached record before the delete, when there was one. */
  onDelete: (key: string, last?: Versioned<T>) => void;
}

/** The store operations an informer needs; kept narrow so the informer is easy to follow. */
export interface InformerSource {
  list<T>(prefix: string, schema: z.ZodType<T>): Promise<{ items: Versioned<T>[]; revision: string }>;
  watch(prefix: string, opts: WatchOptions, onEvent: (e: WatchEvent) => void): Promise<Watch>;
}

/**
 * List-then-watch from the list revision + 1, so nothing is missed or seen twice. When the
 * watch cannot continue (history compacted), it re-lists and emits what changed meanwhile.
 */
class PrefixInformer<T> implements Informer<T> {
  private cache = new Map<string, Versioned<T>>();
  private watch: Watch | undefined;
  private closed = false;
  private generation = 0;
  private relisting: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly source: InformerSource,
    private readonly log: Logger,
    private readonly prefix: string,
    private readonly schema: z.ZodType<T>,
    private readonly handler: InformerHandler<T>,
  ) {}

  items(): Map<string, Versioned<T>> {
    return new Map(this.cache);
  }

  get(key: string): Versioned<T> | undefined {
    return this.cache.get(key);
  }

  async start(): Promise<void> {
    const { items, revision } = await this.source.list(this.prefix, this.schema);
    this.cache = new Map(items.map((i) => [i.key, i]));
    if (this.handler.onSync) this.call(() => this.handler.onSync?.(items));
    else for (const item of items) this.call(() => this.handler.onPut(item));
    await this.watchFrom(addRevision(revision, 1));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.generation++;
    this.wake?.();
    await this.relisting?.catch(() => undefined);
    await this.watch?.close();
  }

  private async watchFrom(fromRevision: string): Promise<void> {
    const generation = ++this.generation;
    const watch = await this.source.watch(
      this.prefix,
      { fromRevision, onError: () => this.relist(generation) },
      (e) => {
        if (generation === this.generation) this.apply(e);
      },
    );
    if (generation !== this.generation) await watch.close();
    else this.watch = watch;
  }

  private apply(e: WatchEvent): void {
    if (e.type === 'delete') {
      const last = this.cache.get(e.key);
      if (!last) return;
      this.cache.delete(e.key);
      this.call(() => this.handler.onDelete(e.key, last));
      return;
    }
    const parsed = this.schema.safeParse(e.value);
    if (!parsed.success) {
      this.log.warn({ key: e.key, issues: parsed.error.issues }, 'skipping a record that fails its schema');
      return;
    }
    const item = {
      key: e.key,
      value: parsed.data,
      modRevision: e.modRevision,
      createRevision: e.createRevision,
    };
    this.cache.set(e.key, item);
    this.call(() => this.handler.onPut(item));
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
        const { items, revision } = await this.source.list(this.prefix, this.schema);
        if (this.closed) return;
        this.diff(items);
        await this.watchFrom(addRevision(revision, 1));
        this.log.info({ prefix: this.prefix, revision }, 'informer re-listed after its watch ended');
      },
      failed: (err) => this.log.warn({ err, prefix: this.prefix }, 'informer re-list failed; retrying'),
      setWake: (wake) => (this.wake = wake),
    });
  }

  private diff(items: Versioned<T>[]): void {
    const next = new Map(items.map((i) => [i.key, i]));
    const previous = this.cache;
    this.cache = next;
    for (const [key, last] of previous) {
      if (!next.has(key)) this.call(() => this.handler.onDelete(key, last));
    }
    for (const item of items) {
      if (previous.get(item.key)?.modRevision !== item.modRevision) this.call(() => this.handler.onPut(item));
    }
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err, prefix: this.prefix }, 'informer handler threw');
    }
  }
}

/** Starts an informer on prefix; resolves after the first listing was handed over and the watch runs. */
export async function startInformer<T>(
  source: InformerSource,
  log: Logger,
  prefix: string,
  schema: z.ZodType<T>,
  handler: InformerHandler<T>,
): Promise<Informer<T>> {
  const informer = new PrefixInformer(source, log, prefix, schema, handler);
  await informer.start();
  return informer;
}
