import { CatalogEntry, keys, type CatalogRebuildResponse } from '@vtl/api';
import type { Store } from '@vtl/store';
import type { z } from 'zod';
import { runRemoteOp } from './remote-ops.js';
import { remoteRecord } from './remotes.js';

/** GET /api/catalog: the cached generations of one remote, in key order. */
export async function listCatalog(store: Store, remoteId: number): Promise<CatalogEntry[]> {
  return (await store.list(keys.catalog.remote(remoteId), CatalogEntry)).items.map((i) => i.value);
}

/**
 * POST /api/catalog/rebuild: the controller lists the bucket (fetching every manifest), then
 * replaces the remote's cached catalog; an unreachable bucket leaves the cache as it was.
 */
export async function rebuildCatalog(
  store: Store,
  remoteId: number,
  opts: { requestedBy: string; deadlineMs: number },
): Promise<z.infer<typeof CatalogRebuildResponse>> {
  await remoteRecord(store, remoteId);
  const { result } = await runRemoteOp<z.infer<typeof CatalogRebuildResponse>>(store, {
    kind: 'catalog_rebuild',
    params: { remote_id: remoteId, deadline_ms: opts.deadlineMs },
    requestedBy: opts.requestedBy,
    waitMs: opts.deadlineMs,
  });
  return result;
}
