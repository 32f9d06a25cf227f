import type { Logger } from 'pino';
import {
  DataplaneSpec,
  LibrarySpec,
  LibraryStatus,
  NodeHeartbeat,
  NodeLibraryStatus,
  NodeRecord,
  PoolSpec,
  idFromKey,
  keys,
} from '@vtl/api';
import type { Informer, Store } from '@vtl/store';
import { startController, watchInto, type Controller } from '@vtl/reconcile';
import type { ZodType } from 'zod';
import { deriveLibraryStatus } from './library-status.js';
import { HeartbeatTracker } from './heartbeats.js';

/** A pass that lost a compare-and-swap runs again this soon, on the fresh record. */
const CONFLICT_REQUEUE_MS = 20;
/** How often the heartbeats are checked for a node that went quiet though its lease holds. */
export const HEARTBEAT_CHECK_MS = 500;

/**
 * The library reconciler: the one writer of every library's status record. It watches the
 * library specs, the pools, the desired data plane and the nodes' leased status records, and
 * derives each library's lifecycle and conditions from them again on every change, so a node
 * whose lease lapses turns its libraries not ready within one lease period, and ready again
 * when it reports. A node whose lease is kept alive but whose status loop stopped (a hung
 * nodeagent) is caught by its heartbeat instead: a timer re-derives its libraries once the
 * heartbeat is older than the node says it may be (heartbeats.ts), also within one lease period.
 * Writes are compare-and-swap on the status record's revision.
 */
export async function startLibraryReconciler(opts: {
  store: Store;
  logger: Logger;
  /** Clock, for tests of the activation deadline; Date.now by default. */
  now?: () => number;
}): Promise<{ controller: Controller; stop(): Promise<void> }> {
  const { store } = opts;
  const now = opts.now ?? Date.now;
  const informers: Informer<unknown>[] = [];
  const heartbeats = new HeartbeatTracker(now);
  // Filled in as the informers start; a pass before the library informer listed does nothing.
  const caches: {
    libraries?: Informer<LibrarySpec>;
    pools?: Informer<PoolSpec>;
    nodes?: Informer<NodeRecord>;
    served?: Informer<NodeLibraryStatus>;
    dataplane?: Informer<DataplaneSpec>;
  } = {};

  const controller = startController<string>({
    name: 'library',
    logger: opts.logger,
    reconcile: async (key, { log }) => {
      // Keys queued while the informers are still listing: the library informer queues them all.
      const { libraries, pools, nodes, served, dataplane } = caches;
      if (!libraries || !pools || !nodes || !served || !dataplane) return;
      const id = Number(key);
      const spec = libraries.get(keys.libraries.one(id));
      const statusKey = keys.libraryStatus.one(id);
      // Read the status from etcd, not the cache: the CAS then fails only on a real race.
      const current = await store.get(statusKey, LibraryStatus);
      if (!spec) {
        // The library is gone: its status goes too (the delete op normally removes both).
        if (current) await store.delete(statusKey, { modRevision: current.modRevision });
        return;
      }
      // A library being deleted keeps its last status until the delete op removes both.
      if (spec.value.deleting) return;
      // A status derived from a newer spec than this cache holds is not overwritten by it.
      if (
        current?.value.observedGeneration !== undefined &&
        current.value.observedGeneration > Number(spec.modRevision)
      )
        return;
      const node = [...pools.items().values()].find((p) => p.value.id === spec.value.home_pool)?.value.node;
      // A node whose heartbeat went stale counts as not reporting, though its records are there.
      const stale = heartbeats.stale();
      const { status, recheckAfterMs } = deriveLibraryStatus({
        lib: spec.value,
        specRevision: Number(spec.modRevision),
        node,
        dataplane: dataplane.get(keys.dataplane)?.value,
        nodes: new Map(
          [...nodes.items().values()]
            .filter((n) => !stale.has(n.value.node))
            .map((n) => [n.value.node, n.value]),
        ),
        stale,
        served: [...served.items().values()].map((s) => s.value).filter((s) => s.id === id),
        previous: current?.value,
        now: now(),
      });
      if (JSON.stringify(status) !== JSON.stringify(current?.value)) {
        const ok = current
          ? await store.casPut(statusKey, status, current.modRevision)
          : (await store.create(statusKey, status)) !== undefined;
        if (!ok) {
          // Another writer got there first: its write queues this library again; derive anew.
          log.debug({ library: id }, 'library status changed under this pass; deriving again');
          return { requeueAfterMs: CONFLICT_REQUEUE_MS };
        }
        if (status.phase !== current?.value.phase || status.state !== current?.value.state)
          log.info(
            { library: id, phase: status.phase, state: status.state, was: current?.value.phase },
            'library status changed',
          );
      }
      return recheckAfterMs !== undefined ? { requeueAfterMs: recheckAfterMs } : undefined;
    },
  });

  /** Every library's key: a change to what all statuses derive from re-derives them all. */
  const all = () => [...(caches.libraries?.items().keys() ?? [])].map((k) => String(idFromKey(k)));
  const requeueAll = () => all().forEach((k) => controller.queue.add(k));
  const watch = async <T>(
    prefix: string,
    schema: ZodType<T>,
    keyOf: (key: string, value?: T) => string | string[] | undefined,
  ) => {
    const inf = await watchInto(store, prefix, schema, controller.queue, keyOf);
    informers.push(inf as Informer<unknown>);
    return inf;
  };
  // Everything a status depends on is cached before the first pass; the library informer comes last.
  caches.dataplane = await watch(keys.dataplane, DataplaneSpec, all);
  caches.pools = await watch(keys.pools.prefix, PoolSpec, all);
  caches.nodes = await watch(keys.nodeStatus.prefix, NodeRecord, all);
  caches.served = await watch(keys.nodeLibraryStatus.prefix, NodeLibraryStatus, (_k, v) =>
    v ? String(v.id) : undefined,
  );
  // Heartbeats: each one seen is timed by this process's clock; the timer below re-derives every
  // library when a node goes quiet or speaks again (a beat itself changes no status).
  const beat = (v: NodeHeartbeat) => {
    if (heartbeats.seen(v)) requeueAll();
  };
  informers.push(
    (await store.informer(keys.nodeHeartbeat.prefix, NodeHeartbeat, {
      onSync: (items) => items.forEach((i) => beat(i.value)),
      onPut: (i) => beat(i.value),
      // The beat lapses with the lease: the node record goes too, and its watch re-derives.
      onDelete: (_k, last) => last && heartbeats.forget(last.value.node),
    })) as Informer<unknown>,
  );
  const staleTimer = setInterval(() => {
    if (heartbeats.changed()) requeueAll();
  }, HEARTBEAT_CHECK_MS);
  // Its own records too: a status changed by anyone else is derived and written again.
  await watch(keys.libraryStatus.prefix, LibraryStatus, (k) => String(idFromKey(k)));
  caches.libraries = await watch(keys.libraries.prefix, LibrarySpec, (k) => String(idFromKey(k)));
  // Passes run while the informers were listing found a cache missing and did nothing: now all.
  requeueAll();

  return {
    controller,
    stop: async () => {
      clearInterval(staleTimer);
      for (const inf of informers) await inf.close();
      await controller.stop();
    },
  };
}
