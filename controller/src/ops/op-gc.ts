import type { Logger } from 'pino';
import { Op, isOpFinished, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import { removeOp, removeOpResults } from '@vtl/domain';

/** Finished remote and pool-check ops are kept this long (a record of who asked what). */
export const OP_RETAIN_MS = 7 * 24 * 3600_000;
/** A listing's result parts the route did not take (it answered 504 first) go after this. */
export const RESULT_RETAIN_MS = 10 * 60_000;
/** How often the collector runs while the controller leads. */
const GC_EVERY_MS = 10 * 60_000;

/** Whether an op is one of the request-scoped kinds this collector owns. */
const collectable = (op: Op, executor: string) =>
  op.executor === executor || op.kind === 'pool_path_check' || op.kind === 'storage_device_check';

/**
 * One pass: deletes finished request-scoped ops (remote work, pool path checks) older than
 * OP_RETAIN_MS, and listing result parts whose op is gone or finished RESULT_RETAIN_MS ago.
 * The data-plane ops (apply, delete_library, ...) are not touched. Returns what it deleted.
 */
export async function collectOps(
  store: Store,
  executor: string,
  now = Date.now(),
): Promise<{ ops: number; results: number }> {
  const ops = new Map((await store.list(keys.ops.prefix, Op)).items.map((i) => [i.value.id, i]));
  let deletedOps = 0;
  for (const { value, modRevision } of ops.values()) {
    if (!collectable(value, executor) || !isOpFinished(value)) continue;
    const finished = Date.parse(value.finished_at ?? value.created_at);
    if (now - finished < OP_RETAIN_MS) continue;
    if (await removeOp(store, value.id, modRevision)) deletedOps++;
  }
  const resultKeys = await store.listKeys(keys.opResults.prefix);
  const owners = new Set(
    resultKeys.map((k) => Number.parseInt(k.slice(keys.opResults.prefix.length).split('/')[0] as string, 10)),
  );
  let results = 0;
  for (const id of owners) {
    const op = ops.get(id)?.value;
    const finished = op && isOpFinished(op) ? Date.parse(op.finished_at ?? op.created_at) : undefined;
    if (op && (finished === undefined || now - finished < RESULT_RETAIN_MS)) continue;
    results += await removeOpResults(store, id);
  }
  return { ops: deletedOps, results };
}

/** Runs collectOps now and every GC_EVERY_MS until stopped. */
export function startOpCollector(opts: { store: Store; executor: string; logger: Logger }) {
  const log = opts.logger.child({ controller: 'op-gc' });
  let running: Promise<void> = Promise.resolve();
  const pass = () => {
    running = collectOps(opts.store, opts.executor)
      .then((n) => {
        if (n.ops || n.results) log.info(n, 'old operation records deleted');
      })
      .catch((err: unknown) => log.warn({ err }, 'operation records not collected; next pass retries'));
  };
  pass();
  const timer = setInterval(pass, GC_EVERY_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
