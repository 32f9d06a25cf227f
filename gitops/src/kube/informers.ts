import {
  CustomObjectsApi,
  KubeConfig,
  ListWatch,
  Watch,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { GROUP, KINDS, VERSION, type KindName } from '../model/index.js';

/** A custom resource as the informers hold it. */
export interface CustomResource extends KubernetesObject {
  metadata: NonNullable<KubernetesObject['metadata']> & { name: string; namespace?: string };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/**
 * A Watch that asks for BOOKMARK events: the server then sends the current resourceVersion on an
 * idle watch, so a reconnect resumes from a recent version instead of an old one that may be
 * compacted (410), and the idle stream is not mistaken for a dead one.
 */
class BookmarkWatch extends Watch {
  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    return super.watch(path, { ...queryParams, allowWatchBookmarks: true }, callback, done);
  }
}

/** How long a failed list or watch waits before it starts again (doubling up to the cap). */
const RESTART_MS = { first: 1_000, max: 30_000 };

/**
 * One informer per kind (client-node's ListWatch: list, then watch from the list's
 * resourceVersion; on 410 Gone it lists again). Any change calls `onChange`; a list or watch
 * that fails is restarted with backoff (ListWatch stops on errors other than 410).
 */
export class KindInformers {
  private readonly informers = new Map<KindName, ListWatch<CustomResource>>();
  private readonly listed = new Set<KindName>();
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly kc: KubeConfig,
    private readonly namespace: string,
    private readonly onChange: (kind: KindName) => void,
    private readonly log: Logger,
  ) {}

  /** Starts every informer; resolves once each has listed once. */
  async start(): Promise<void> {
    const api = this.kc.makeApiClient(CustomObjectsApi);
    const watch = new BookmarkWatch(this.kc);
    await Promise.all(
      Object.values(KINDS).map(async ({ kind, plural }) => {
        const path = `/apis/${GROUP}/${VERSION}/namespaces/${this.namespace}/${plural}`;
        const list = async () => {
          const result = (await api.listNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace: this.namespace,
            plural,
          })) as { items: CustomResource[]; metadata?: { resourceVersion?: string } };
          this.listed.add(kind);
          this.log.debug(
            { kind, resourceVersion: result.metadata?.resourceVersion, items: result.items.length },
            'listed',
          );
          return result;
        };
        const informer = new ListWatch<CustomResource>(path, watch, list, false);
        const changed = () => this.onChange(kind);
        informer.on('add', changed);
        informer.on('update', changed);
        informer.on('delete', changed);
        let delay = RESTART_MS.first;
        informer.on('connect', () => (delay = RESTART_MS.first));
        informer.on('error', (err: unknown) => {
          if (this.stopped) return;
          this.log.warn(
            { kind, err: (err as Error)?.message ?? String(err), retryMs: delay },
            'list/watch failed; restarting',
          );
          const timer = setTimeout(() => {
            this.timers.delete(timer);
            if (!this.stopped) void informer.start();
          }, delay);
          this.timers.add(timer);
          delay = Math.min(delay * 2, RESTART_MS.max);
        });
        this.informers.set(kind, informer);
        await informer.start();
      }),
    );
  }

  /** True once every kind has been listed (the desired set is complete). */
  get synced(): boolean {
    return this.listed.size === this.informers.size && this.informers.size > 0;
  }

  /** The cached objects of one kind. */
  list(kind: KindName): readonly CustomResource[] {
    return this.informers.get(kind)?.list(this.namespace) ?? [];
  }

  /** The watch's current resourceVersion of one kind (after bookmarks too). */
  resourceVersion(kind: KindName): string | undefined {
    return this.informers.get(kind)?.latestResourceVersion();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}
