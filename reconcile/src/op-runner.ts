import type { Logger } from 'pino';
import { Op, VtlError, isOpFinished, isoNow, keys, type OpKind } from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import { startController, type Controller } from './controller.js';
import { watchInto } from './informer.js';

/**
 * Operation kinds that are maintenance sequences: their steps stream as `maint_step` events and
 * their end as `maint_done`. A recovery is one (it declares a library, activates it, queues its
 * imports): its own steps stream under `recover#<id>`, its apply's under `apply#<id>`.
 */
const MAINTENANCE: readonly OpKind[] = ['apply', 'dataplane_restart', 'delete_library', 'recover'];

export interface OpContext {
  log: Logger;
  /** Records a human-readable step on the op (and as a `maint_step` event for maintenance ops). */
  step(text: string): Promise<void>;
  /**
   * Streams, as `maint_step` for maintenance ops, a step the handler recorded on the op itself
   * (in its own transaction, or several at once); step() is record and announce in one.
   */
  announce(text: string): Promise<void>;
  /** Runs after the outcome is recorded (e.g. a reboot that must not lose the answer). */
  afterFinish(fn: () => Promise<void>): void;
  /** Marks the `maint_done` event as announcing a reboot. */
  announceReboot(): void;
}

export type OpHandler = (op: Op, ctx: OpContext) => Promise<unknown>;

/**
 * Carries out the operations addressed to one executor. An op found `running` at start-up was
 * interrupted by a crash: it runs again, so every handler is idempotent.
 */
export async function startOpRunner(opts: {
  store: Store;
  journal: EventJournal;
  executor: string;
  logger: Logger;
  handlers: Partial<Record<OpKind, OpHandler>>;
  /** Ops carried out at once (default 1: one after the other). */
  workers?: number;
}): Promise<{ stop(): Promise<void> }> {
  const { store, journal, executor } = opts;
  const controller: Controller = startController<string>({
    name: `ops:${executor}`,
    logger: opts.logger,
    workers: opts.workers ?? 1,
    reconcile: async (key, { log }) => {
      const current = await store.get(key, Op);
      if (!current || isOpFinished(current.value) || current.value.executor !== executor) return;
      // writes keys.ops
      const claimed = await store.update(key, Op, (op) =>
        op && op.state === 'pending' ? { ...op, state: 'running' as const } : undefined,
      );
      const op = claimed?.value ?? current.value;
      if (isOpFinished(op)) return;
      await run(op, log);
    },
  });

  async function run(op: Op, log: Logger) {
    const key = keys.ops.one(op.id);
    const maintenance = MAINTENANCE.includes(op.kind);
    const label = `${op.kind}#${op.id}`;
    const deferred: Array<() => Promise<void>> = [];
    let rebooting = false;
    const announce = async (text: string) => {
      if (maintenance)
        await journal.emit({
          kind: 'maint_step',
          subject: label,
          detail: text,
          data: { label, step: text },
        });
    };
    const ctx: OpContext = {
      log,
      step: async (text) => {
        log.info({ step: text }, 'op step');
        await store.update(key, Op, (cur) => (cur ? { ...cur, steps: [...cur.steps, text] } : undefined));
        await announce(text);
      },
      announce,
      afterFinish: (fn) => void deferred.push(fn),
      announceReboot: () => void (rebooting = true),
    };
    let outcome: Partial<Op>;
    try {
      const handler = opts.handlers[op.kind];
      if (!handler) throw new VtlError('internal', `${executor} cannot carry out ${op.kind}.`);
      const result = await handler(op, ctx);
      outcome = { state: 'succeeded', result };
    } catch (err) {
      const vtl =
        err instanceof VtlError
          ? err
          : new VtlError('internal', `${op.kind} failed: ${(err as Error).message}`);
      if (!(err instanceof VtlError)) log.error({ err }, 'op failed');
      outcome = { state: 'failed', error: vtl.toBody().error };
    }
    // The event goes out before the record says finished: a client that waits on the op record
    // (the route answering the request) must find the event when it searches right after.
    if (maintenance) {
      const ok = outcome.state === 'succeeded';
      const detail = ok ? `${op.kind} finished` : (outcome.error?.message ?? 'failed');
      const steps = (await store.get(key, Op))?.value.steps ?? [];
      await journal.emit({
        kind: 'maint_done',
        subject: label,
        detail,
        data: { ok, detail, steps, ...(rebooting ? { rebooting: true } : {}) },
      });
    }
    await store.update(key, Op, (cur) => (cur ? { ...cur, ...outcome, finished_at: isoNow() } : undefined));
    for (const fn of deferred) await fn().catch((err) => log.error({ err }, 'after-finish action failed'));
  }

  const informer = await watchInto(store, keys.ops.prefix, Op, controller.queue, (key, op) =>
    op && op.executor === executor && !isOpFinished(op) ? key : undefined,
  );
  return {
    stop: async () => {
      await informer.close();
      await controller.stop();
    },
  };
}
