import type { Store, Versioned } from '@vtl/store';
import { watchEach } from '@vtl/reconcile';
import type { z } from 'zod';

/**
 * Watches a prefix (an informer: list, then watch from its revision) until check(), run on
 * every change, returns a value; resolves with it, or with check's last answer on `undefined`
 * after timeoutMs. A wait on a watch answers as soon as a record changes, without polling.
 */
export async function waitOnRecords<T, R>(
  store: Store,
  prefix: string,
  schema: z.ZodType<T>,
  check: (items: Map<string, Versioned<T>>) => R | undefined,
  timeoutMs: number,
): Promise<{ done: R | undefined; items: Map<string, Versioned<T>> }> {
  let settle: (r: R | undefined) => void = () => undefined;
  const settled = new Promise<R | undefined>((resolve) => (settle = resolve));
  let evaluate = () => undefined as unknown;
  const informer = await watchEach(store, prefix, schema, () => evaluate());
  evaluate = () => {
    const r = check(informer.items());
    if (r !== undefined) settle(r);
  };
  evaluate();
  const timer = setTimeout(() => settle(undefined), timeoutMs);
  try {
    const done = await settled;
    return { done, items: informer.items() };
  } finally {
    clearTimeout(timer);
    await informer.close();
  }
}
