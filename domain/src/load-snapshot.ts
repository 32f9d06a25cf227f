import {
  CartridgeSpec,
  DataplaneSpec,
  Job,
  LibrarySpec,
  LibraryStatus,
  PoolSpec,
  PoolStatus,
  keys,
} from '@vtl/api';
import type { Store } from '@vtl/store';
import { listNodeStatus } from './node-status.js';
import type { Snapshot } from './snapshot.js';

/** Reads every record a view or a refusal check needs. */
export async function loadSnapshot(store: Store): Promise<Snapshot> {
  const [libraries, libraryStatus, pools, poolStatus, nodes, cartridges, jobs, dataplane] = await Promise.all(
    [
      store.list(keys.libraries.prefix, LibrarySpec),
      store.list(keys.libraryStatus.prefix, LibraryStatus),
      store.list(keys.pools.prefix, PoolSpec),
      store.list(keys.poolStatus.prefix, PoolStatus),
      listNodeStatus(store),
      store.list(keys.cartridges.prefix, CartridgeSpec),
      store.list(keys.jobs.prefix, Job),
      store.get(keys.dataplane, DataplaneSpec),
    ],
  );
  return {
    libraries: libraries.items.map((i) => i.value),
    libraryStatus: new Map(libraryStatus.items.map((i) => [i.value.id, i.value])),
    pools: pools.items.map((i) => i.value),
    poolStatus: new Map(poolStatus.items.map((i) => [i.value.id, i.value])),
    nodes,
    cartridges: cartridges.items.map((i) => i.value),
    jobs: jobs.items.map((i) => i.value),
    dataplane: dataplane?.value,
  };
}
