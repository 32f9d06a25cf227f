import { z } from 'zod';
import { NodeFabricStatus } from './targets.js';

export const DriveActivity = z.enum(['idle', 'reading', 'writing', 'mounting']);
export type DriveActivity = z.infer<typeof DriveActivity>;

/** §2.5 */
export const Drive = z.object({
  index: z.number().int(),
  library: z.number().int(),
  queue_id: z.number().int(),
  serial: z.string(),
  product: z.string(),
  sg: z.string(),
  st: z.string(),
  loaded: z.string(),
  source_slot: z.number().int(),
  activity: DriveActivity,
  blocks_written: z.number().int(),
  blocks_read: z.number().int(),
  // Beyond §2.5 (docs/api.md): 0 in a record an older nodeagent wrote.
  iscsi_bytes_written: z
    .number()
    .int()
    .default(0)
    .describe('Bytes hosts wrote to the drive over iSCSI (Data-Out) since the emulator started'),
  iscsi_bytes_read: z
    .number()
    .int()
    .default(0)
    .describe('Bytes hosts read from the drive over iSCSI (Data-In) since the emulator started'),
  last_active: z.string(),
});
export type Drive = z.infer<typeof Drive>;

export const SlotKind = z.enum(['storage', 'ie']);
/** §2.6 */
export const Slot = z.object({ kind: SlotKind, num: z.number().int(), label: z.string() });
export type Slot = z.infer<typeof Slot>;

/** §2.4 */
export const LiveLibrary = z.object({
  id: z.number().int(),
  product: z.string(),
  serial: z.string(),
  home_dir: z.string(),
  num_slots: z.number().int(),
  num_ie: z.number().int(),
  num_drives: z.number().int(),
  changer_sg: z.string(),
  live: z.boolean(),
  name: z.string(),
});
export type LiveLibrary = z.infer<typeof LiveLibrary>;

export const LocalState = z.enum(['resident', 'evicted']);
export type LocalState = z.infer<typeof LocalState>;

/** What a nodeagent observes of one cartridge image. */
export const ObservedCartridge = z.object({
  label: z.string(),
  library: z.number().int(),
  size_bytes: z.number().int(),
  phys_bytes: z.number().int(),
  // Beyond §2.7 (docs/api.md): 0 in a record an older nodeagent wrote.
  capacity_bytes: z
    .number()
    .int()
    .default(0)
    .describe("The cartridge's capacity in bytes, from its image; 0 when not known"),
  modified: z.string(),
  location: z.string(),
  local_state: LocalState,
});
export type ObservedCartridge = z.infer<typeof ObservedCartridge>;

/** One served library as a nodeagent observes it through the emulator. */
export const ObservedLibrary = z.object({
  id: z.number().int(),
  serial: z.string(),
  changer_sg: z.string(),
  drives: z.array(Drive),
  slots: z.array(Slot),
});
export type ObservedLibrary = z.infer<typeof ObservedLibrary>;

export const DataplaneState = z.enum(['stopped', 'starting', 'running', 'failed']);

/**
 * One node's live view as the readers see it: the node record and its per-library records put
 * together (assembleNodeStatus). Disappears when the node dies (every part is leased).
 */
export const NodeStatus = z.object({
  node: z.string(),
  updated_at: z.string(),
  dataplane: z.object({
    state: DataplaneState,
    generation: z.number().int(),
    pid: z.number().int(),
    detail: z.string(),
    started_at: z.string(),
    iscsi_portal: z.string(),
    /** Logged-in iSCSI host sessions. */
    iscsi_sessions: z.number().int().default(0),
  }),
  libraries: z.array(ObservedLibrary),
  cartridges: z.array(ObservedCartridge),
  /** FC target and initiator-registry state of this node; absent from nodeagents that predate it. */
  fabric: NodeFabricStatus.optional(),
});
export type NodeStatus = z.infer<typeof NodeStatus>;

/**
 * A node's heartbeat (keys.nodeHeartbeat): written by its status loop every `interval_ms`; a
 * reader that has not seen it rewritten for `stale_after_ms` treats the node as not reporting,
 * lease or not. The reader judges age by its own clock (when it saw the write), never by `at`.
 */
export const NodeHeartbeat = z.object({
  node: z.string(),
  at: z.string(),
  interval_ms: z.number().int().positive(),
  stale_after_ms: z.number().int().positive(),
});
export type NodeHeartbeat = z.infer<typeof NodeHeartbeat>;

/** The stored node record (keys.nodeStatus): data plane and fabric, without the libraries. */
export const NodeRecord = NodeStatus.omit({ libraries: true, cartridges: true });
export type NodeRecord = z.infer<typeof NodeRecord>;

/**
 * The stored record of one library on one node (keys.nodeLibraryStatus). `library` is absent
 * only for cartridge images the emulator holds for a library it does not serve.
 */
export const NodeLibraryStatus = z.object({
  node: z.string(),
  id: z.number().int(),
  library: ObservedLibrary.optional(),
  cartridges: z.array(ObservedCartridge),
});
export type NodeLibraryStatus = z.infer<typeof NodeLibraryStatus>;

/**
 * Puts the split records back together as one NodeStatus per node, libraries by id (the order
 * the emulator reports them in). Library records of a node without its node record are left
 * out: the node is not reporting (they share its lease and lapse with it).
 */
export function assembleNodeStatus(
  records: readonly NodeRecord[],
  libraries: readonly NodeLibraryStatus[],
): NodeStatus[] {
  const byNode = new Map<string, NodeLibraryStatus[]>();
  for (const l of libraries) byNode.set(l.node, [...(byNode.get(l.node) ?? []), l]);
  return records.map((r) => {
    const mine = (byNode.get(r.node) ?? []).slice().sort((a, b) => a.id - b.id);
    return {
      ...r,
      libraries: mine.flatMap((l) => (l.library ? [l.library] : [])),
      cartridges: mine.flatMap((l) => l.cartridges),
    };
  });
}

/** Splits a node's live view into its node record and one record per library (the publisher's side). */
export function splitNodeStatus(status: NodeStatus): { node: NodeRecord; libraries: NodeLibraryStatus[] } {
  const { libraries, cartridges, ...node } = status;
  const ids = [...new Set([...libraries.map((l) => l.id), ...cartridges.map((c) => c.library)])];
  return {
    node,
    libraries: ids.map((id) => ({
      node: status.node,
      id,
      ...(libraries.some((l) => l.id === id) ? { library: libraries.find((l) => l.id === id) } : {}),
      cartridges: cartridges.filter((c) => c.library === id),
    })),
  };
}

/** What the data plane serves: written by the controller on apply / data-plane restart. */
export const DataplaneSpec = z.object({
  generation: z.number().int(),
  libraries: z.array(z.number().int()),
  requested_at: z.string(),
});
export type DataplaneSpec = z.infer<typeof DataplaneSpec>;
