import {
  boundedStep,
  exitOnRestartRequest,
  runStoreProcess,
  runWhileLeader,
  startOpRunner,
} from '@vtl/reconcile';
import { loadConfig } from './config.js';
import { activate } from './library/apply.js';
import { deleteLibraryOp } from './library/delete-library.js';
import { startLibraryReconciler } from './library/library-reconciler.js';
import { DEFAULT_DRAIN_TIMEOUT_MS, startDrainReconciler } from './system/drain.js';
import { startJobReconciler } from './jobs/job-reconciler.js';
import { startEvictPolicy } from './jobs/evict-policy.js';
import { startIeWatcher } from './jobs/ie-watcher.js';
import { startRemoteOps } from './ops/index.js';
import { startGitopsPoller } from './gitops/poller.js';

/** Lease of the controller's leadership; a standby takes over about this long after a crash. */
const LEADER_TTL_SEC = 5;

/** Entry point: campaigns for leadership, then carries out the controller's operations. */
runStoreProcess({ name: 'controller', loadConfig }, async ({ config, logger, store, journal }) => {
  const restartWatch = await exitOnRestartRequest(store, logger);
  const drainTimeoutMs = config.drainTimeoutMs || DEFAULT_DRAIN_TIMEOUT_MS;
  const candidateId = `${config.node}:${process.pid}`;
  const leader = runWhileLeader({
    store,
    election: 'controller',
    candidateId,
    ttlSec: LEADER_TTL_SEC,
    logger,
    lead: async (signal) => {
      logger.info({ candidateId }, 'controller leading');
      const runner = await startOpRunner({
        store,
        journal,
        executor: 'controller',
        logger,
        handlers: {
          apply: (_op, ctx) => activate(store, 'Apply', ctx, { refuseLoaded: true }),
          dataplane_restart: (_op, ctx) =>
            activate(store, 'A data-plane restart', ctx, { refuseLoaded: false }),
          delete_library: deleteLibraryOp({ store, journal }),
        },
      });
      const libraries = await startLibraryReconciler({ store, logger });
      const remoteOps = await startRemoteOps({ store, journal, logger });
      const drain = await startDrainReconciler({ store, journal, logger, timeoutMs: drainTimeoutMs });
      const jobs = await startJobReconciler({ store, journal, logger });
      const evictPolicy = await startEvictPolicy({
        store,
        journal,
        logger,
        everyMs: config.evictPolicyPeriodMs || undefined,
      });
      const ieWatcher = await startIeWatcher({ store, journal, logger });
      const gitops = await startGitopsPoller({ store, journal, logger, ...config.gitops });
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await gitops.stop();
      await ieWatcher.stop();
      await evictPolicy.stop();
      await jobs.stop();
      await drain.stop();
      await remoteOps.stop();
      await runner.stop();
      await libraries.stop();
    },
  });

  // Bounded steps: an orphan whose etcd is stopped or gone still exits (runProcess's hard exit).
  // runStoreProcess then closes the metrics endpoint and the store.
  return async () => {
    await boundedStep(logger, 'close restart watch', () => restartWatch.close());
    await boundedStep(logger, 'step down', () => leader.stop(), 3_000);
  };
});
