import { VtlError, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import { waitFor } from '@vtl/reconcile';

/** A lock dies with its lease if the apiserver crashes while holding it. */
const LOCK_LEASE_SEC = 15;
const LOCK_WAIT_MS = 10_000;

/** How one kind of lock waits and what it says when it gave up. */
export interface LockOptions {
  /** How long to wait for the holder to finish (default 10 s). */
  waitMs?: number;
  /** How often to try meanwhile (default 50 ms). */
  intervalMs?: number;
  /** Renew the lease while `fn` runs (a long holder such as a GitOps apply). */
  renewing?: boolean;
  /** More about the holder, stored in the lock record. */
  holder?: Record<string, string>;
  /** The 409's message when the wait runs out. */
  busy?: string;
}

/**
 * Runs `fn` while holding a named lock in etcd, for decisions that read many records and then
 * write several (two mints must not promise the same free slot).
 */
export async function withLock<T>(
  store: Store,
  name: string,
  fn: () => Promise<T>,
  opts: LockOptions = {},
): Promise<T> {
  const lease = opts.renewing ? await store.renewingLease(LOCK_LEASE_SEC) : await store.lease(LOCK_LEASE_SEC);
  try {
    await waitFor(
      async () =>
        (await store.create(keys.lock(name), { ...opts.holder, pid: process.pid }, { lease })) !== undefined,
      { timeoutMs: opts.waitMs ?? LOCK_WAIT_MS, intervalMs: opts.intervalMs ?? 50 },
    ).catch(() => {
      throw new VtlError('conflict', opts.busy ?? `Another request holds ${name}; retry in a few seconds.`);
    });
    return await fn();
  } finally {
    await lease.revoke();
  }
}
