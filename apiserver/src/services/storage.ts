import path from 'node:path';
import { StorageSpec, StorageStatus, badRequest, keys, type StorageView } from '@vtl/api';
import type { AppContext } from '../context.js';

/** The node's storage spec and what its nodeagent reports, or undefined when it has none. */
export async function storageView(ctx: AppContext, node: string): Promise<StorageView | undefined> {
  const spec = (await ctx.store.get(keys.storage.one(node), StorageSpec))?.value;
  if (!spec) return undefined;
  const status = (await ctx.store.get(keys.storageStatus.one(node), StorageStatus))?.value ?? null;
  return {
    node,
    devices: spec.devices,
    dedup_schedule: spec.dedup,
    created_at: spec.created_at,
    deleting: spec.deleting === true,
    status,
  };
}

/**
 * Where a pool on the node's shared storage lives: `<mount>/pools/<name>`, a subvolume its
 * nodeagent makes. Refused while the node has no storage ready.
 */
export async function storagePoolPath(ctx: AppContext, node: string, name: string): Promise<string> {
  const view = await storageView(ctx, node);
  if (!view)
    throw badRequest(
      `path is required: node ${node} has no shared storage (POST /api/storage sets it up; docs/storage.md).`,
    );
  if (view.deleting || view.status?.state !== 'ready')
    throw badRequest(
      `The shared storage of node ${node} is not ready (${view.deleting ? 'being torn down' : (view.status?.detail ?? 'not reported yet')}).`,
    );
  return path.join(view.status.mountpoint, 'pools', name);
}

/** The node a request names, or the only node up when it names none. */
export function requestNode(upNodes: string[], node: string | undefined): string {
  if (node) return node;
  if (upNodes.length !== 1)
    throw badRequest(`node is required: ${upNodes.length} nodes are up (${upNodes.join(', ') || 'none'}).`);
  return upNodes[0] as string;
}
