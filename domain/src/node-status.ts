import { NodeLibraryStatus, NodeRecord, assembleNodeStatus, keys, type NodeStatus } from '@vtl/api';
import type { Store } from '@vtl/store';

/**
 * Every node's live view, put together from its node record and its per-library records (one
 * read of each prefix). Readers see the same NodeStatus as when it was a single record.
 */
export async function listNodeStatus(store: Store): Promise<NodeStatus[]> {
  const [nodes, libraries] = await Promise.all([
    store.list(keys.nodeStatus.prefix, NodeRecord),
    store.list(keys.nodeLibraryStatus.prefix, NodeLibraryStatus),
  ]);
  return assembleNodeStatus(
    nodes.items.map((i) => i.value),
    libraries.items.map((i) => i.value),
  );
}
