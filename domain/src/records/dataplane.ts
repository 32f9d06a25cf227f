import { DataplaneSpec, isoNow, keys } from '@vtl/api';
import type { Store } from '@vtl/store';

/**
 * What the data plane should serve (keys.dataplane): the libraries, and a generation each node's
 * dataplane reconciler compares with the one its emulator serves. The controller writes it:
 * an apply or data-plane restart bumps it, a library delete drops its library.
 */

/** Asks every node to serve `libraries` from a new generation (its emulator restarts). */
export async function requestDataplane(store: Store, libraries: number[]): Promise<DataplaneSpec> {
  const spec = await store.update(keys.dataplane, DataplaneSpec, (cur) => ({
    generation: (cur?.generation ?? 0) + 1,
    libraries,
    requested_at: isoNow(),
  }));
  return spec!.value;
}

/** Drops a deleted library from what is served, keeping the generation (no restart for it). */
export async function dropFromDataplane(store: Store, id: number): Promise<void> {
  await store.update(keys.dataplane, DataplaneSpec, (cur) =>
    cur && cur.libraries.includes(id)
      ? { ...cur, libraries: cur.libraries.filter((l) => l !== id) }
      : undefined,
  );
}
