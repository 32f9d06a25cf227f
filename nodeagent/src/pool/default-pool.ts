import { isoNow, keys } from '@vtl/api';
import { createPool } from '@vtl/domain';
import { EventJournal, type Store } from '@vtl/store';
import type { Logger } from 'pino';

export const DEFAULT_POOL_NAME = 'default';

/**
 * The single-node appliance starts with one directory pool. It is created only when the
 * appliance has no pool at all, so an operator who removed it is not overruled.
 */
export async function ensureDefaultPool(store: Store, node: string, path: string, logger: Logger) {
  if (!path || (await store.count(keys.pools.prefix)) > 0) return;
  const created = await createPool(store, (id) => ({
    id,
    name: DEFAULT_POOL_NAME,
    node,
    path,
    created_at: isoNow(),
  }));
  if (created) {
    logger.info({ pool: created.id, path }, 'created the default pool');
    // §6.2 topology change, as for a pool created through the API.
    await new EventJournal(store).emit({
      kind: 'pool_created',
      subject: DEFAULT_POOL_NAME,
      detail: `${node}:${path}`,
    });
  }
  return created;
}
