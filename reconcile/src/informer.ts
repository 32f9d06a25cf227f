import type { Informer, Store } from '@vtl/store';
import type { z } from 'zod';
import type { WorkQueue } from './work-queue.js';

/**
 * An informer on prefix that enqueues the key(s) keyOf maps each change to. keyOf gets the
 * record's value on sync and put, and its last known value on delete (undefined if unknown).
 */
export function watchInto<T, K extends string>(
  store: Store,
  prefix: string,
  schema: z.ZodType<T>,
  queue: WorkQueue<K>,
  keyOf: (key: string, value?: T) => K | K[] | undefined,
): Promise<Informer<T>> {
  const enqueue = (key: string, value?: T) => {
    const mapped = keyOf(key, value);
    if (mapped === undefined) return;
    for (const k of Array.isArray(mapped) ? mapped : [mapped]) queue.add(k);
  };
  return store.informer(prefix, schema, {
    onSync: (items) => items.forEach((i) => enqueue(i.key, i.value)),
    onPut: (i) => enqueue(i.key, i.value),
    onDelete: (key, last) => enqueue(key, last?.value),
  });
}
