import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { observeReconcile, trackQueue } from './metrics.js';
import { WorkQueue, type WorkQueueOptions } from './work-queue.js';

/** What one reconcile pass asks for: nothing (done) or another pass after a delay. */
export type ReconcileResult = void | { requeueAfterMs: number };

/** The usual requeue delays, so reconcilers name their intent instead of a number. */
export const Requeue = { soon: 1_000, poll: 5_000, slow: 30_000 } as const;

/** A failure that retrying cannot fix (bad spec, missing prerequisite the user must add): logged, not retried. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/** A running controller. */
export interface Controller<K extends string = string> {
  readonly queue: WorkQueue<K>;
  /** Shuts the queue and waits for in-flight reconciles to finish. */
  stop(): Promise<void>;
}

/** Options of startController(). */
export interface ControllerOptions<K extends string> {
  name: string;
  logger: Logger;
  /** Parallel reconciles (of different keys); default 1. */
  workers?: number;
  reconcile: (key: K, ctx: { log: Logger }) => Promise<ReconcileResult>;
  /** Backoff of failed reconciles. */
  queue?: WorkQueueOptions;
}

/**
 * Runs reconcile for queued keys. Three outcomes only, as in controller-runtime: done
 * (backoff reset), requeue after N ms, or a throw: a TerminalError is logged and dropped,
 * any other error is logged and retried with per-key exponential backoff.
 */
export function startController<K extends string>(opts: ControllerOptions<K>): Controller<K> {
  const queue = new WorkQueue<K>(opts.queue);
  const log = opts.logger.child({ controller: opts.name });
  const untrack = trackQueue(opts.name, queue);
  const workers = Array.from({ length: Math.max(1, opts.workers ?? 1) }, () => work());

  async function work(): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      try {
        await reconcileOnce(key);
      } finally {
        queue.done(key);
      }
    }
  }

  async function reconcileOnce(key: K): Promise<void> {
    // One id per pass, in every line the pass logs, as controller-runtime's reconcileID.
    const passLog = log.child({ key, reconcileID: randomUUID() });
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const result = await opts.reconcile(key, { log: passLog });
      queue.forget(key);
      const ms = Math.round(performance.now() - started);
      if (result && result.requeueAfterMs > 0) {
        observeReconcile(opts.name, 'requeue_after', seconds());
        passLog.debug({ ms, requeueAfterMs: result.requeueAfterMs }, 'reconciled; requeue');
        queue.addAfter(key, result.requeueAfterMs);
      } else {
        observeReconcile(opts.name, 'success', seconds());
        passLog.debug({ ms }, 'reconciled');
      }
    } catch (err) {
      const ms = Math.round(performance.now() - started);
      if (err instanceof TerminalError) {
        observeReconcile(opts.name, 'terminal_error', seconds());
        passLog.error({ err, ms }, 'reconcile failed terminally; not retrying');
        queue.forget(key);
      } else {
        observeReconcile(opts.name, 'error', seconds());
        const retryInMs = queue.nextBackoff(key);
        passLog.warn({ err, ms, retryInMs, retries: queue.retries(key) + 1 }, 'reconcile failed; will retry');
        queue.addRateLimited(key);
      }
    }
  }

  return {
    queue,
    async stop() {
      queue.shutdown();
      await Promise.all(workers);
      untrack();
    },
  };
}
