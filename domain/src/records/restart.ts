import { randomUUID } from 'node:crypto';
import { isoNow, keys, type RestartRequest } from '@vtl/api';
import type { Store, Txn } from '@vtl/store';

/**
 * The control-plane restart records (§3.5): the drain state (keys.drain) and the restart
 * request (keys.restartRequest), which every control-plane process watches to exit on a newer
 * one. The only module that writes them (the updater writes its own request to restart into a
 * new release). A restart is requested together with the drain's end, so nothing stays draining
 * once the control plane restarts.
 */

/** A graceful restart waits for the active jobs, up to `limitMs` (job-creating calls get 409). */
export async function startDrain(store: Store, limitMs: number): Promise<void> {
  const now = Date.now();
  await store.put(keys.drain, {
    draining: true,
    since: isoNow(new Date(now)),
    deadline: isoNow(new Date(now + limitMs)),
  });
}

/** Gives a drain up (its deadline passed with jobs still active); the control plane runs on. */
export async function abandonDrain(store: Store): Promise<void> {
  await store.put(keys.drain, { draining: false });
}

/**
 * Requests a control-plane restart and ends any drain, in one transaction; `guard` adds what
 * it compares (the drain reconciler: the drain and the jobs as it read them). False when a
 * comparison failed (nothing written).
 */
export async function requestRestart(
  store: Store,
  mode: RestartRequest['mode'],
  guard: (txn: Txn) => void = () => undefined,
): Promise<boolean> {
  const txn = store.transaction();
  guard(txn);
  return txn
    .put(keys.drain, { draining: false })
    .put(keys.restartRequest, { id: randomUUID(), requested_at: isoNow(), mode })
    .commit();
}
