import type { Logger } from 'pino';
import { startOpRunner, type OpHandler } from '@vtl/reconcile';
import type { EventJournal, Store } from '@vtl/store';
import type { OpKind } from '@vtl/api';
import { startOpCollector } from './op-gc.js';
import { recoverOp } from './recover.js';
import { catalogRebuildOp, remoteObjectsDeleteOp, remoteObjectsListOp, remoteTestOp } from './remote-ops.js';

/**
 * The controller's remote operations (recover, catalog rebuild, remote test, object listing and
 * deletion): the only place besides the nodeagent's transfer jobs that talks to S3. The
 * apiserver records these ops and waits on them; the controller's op runner carries them out.
 */
export function remoteOpHandlers(store: Store, journal: EventJournal): Partial<Record<OpKind, OpHandler>> {
  return {
    recover: recoverOp(store, journal),
    catalog_rebuild: catalogRebuildOp(store),
    remote_test: remoteTestOp(store),
    remote_objects_list: remoteObjectsListOp(store),
    remote_objects_delete: remoteObjectsDeleteOp(store),
  };
}

/** The executor name of remote operations (Op.executor). */
export const REMOTE_OPS_EXECUTOR = 'controller:remote';

/**
 * Runs the remote operations, apart from the controller's data-plane ops: a recovery waits on
 * the apply it recorded (which the `controller` runner carries out), and a slow bucket must not
 * hold up an apply. Several at once: one hung remote does not queue every other remote's calls.
 */
export async function startRemoteOps(opts: { store: Store; journal: EventJournal; logger: Logger }) {
  const runner = await startOpRunner({
    store: opts.store,
    journal: opts.journal,
    executor: REMOTE_OPS_EXECUTOR,
    logger: opts.logger,
    workers: 4,
    handlers: remoteOpHandlers(opts.store, opts.journal),
  });
  // Every test, listing, rebuild and pool check leaves a record: old ones are collected.
  const collector = startOpCollector({
    store: opts.store,
    executor: REMOTE_OPS_EXECUTOR,
    logger: opts.logger,
  });
  return {
    stop: async () => {
      await collector.stop();
      await runner.stop();
    },
  };
}
