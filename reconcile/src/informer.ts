import type { Informer, Store } from '@vtl/store';
import type { z } from 'zod';
import type { WorkQueue } from './work-queue.js';

/**
 * An informer on prefix that calls `on` for every record: each one listed at sync, each put
 * with its value, each delete with its last known value (undefined if unknown).
 */
export function watchEach<T>(
  store: Store,
  prefix: string,
  schema: z.ZodType<T>,
  on: (key: string, value?: T) => void,
): Promise<Informer<T>> {
  return store.informer(prefix, schema, {
    onSync: (items) => items.forEach((i) => on(i.key, i.value)),
    onPut: (i) => on(i.key, i.value),
    onDelete: (key, last) => on(key, last?.value),
  });
}

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
  return watchEach(store, prefix, schema, (key, value) => {
    const mapped = keyOf(key, value);
    if (mapped === undefined) return;
    for (const k of Array.isArray(mapped) ? mapped : [mapped]) queue.add(k);
  });
}
