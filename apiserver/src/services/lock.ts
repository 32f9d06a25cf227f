import { VtlError, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import { waitFor } from '@vtl/reconcile';

/** A lock dies with its lease if the apiserver crashes while holding it. */
const LOCK_LEASE_SEC = 15;
const LOCK_WAIT_MS = 10_000;

/**
 * Runs `fn` while holding a named lock in etcd, for decisions that read many records and then
 * write several (two mints must not promise the same free slot).
 */
export async function withLock<T>(store: Store, name: string, fn: () => Promise<T>): Promise<T> {
  const lease = await store.lease(LOCK_LEASE_SEC);
  try {
    await waitFor(
      async () => (await store.create(keys.lock(name), { pid: process.pid }, { lease })) !== undefined,
      {
        timeoutMs: LOCK_WAIT_MS,
        intervalMs: 50,
      },
    ).catch(() => {
      throw new VtlError('conflict', `Another request holds ${name}; retry in a few seconds.`);
    });
    return await fn();
  } finally {
    await lease.revoke();
  }
}
