import { createHash } from 'node:crypto';
import {
  isoNow,
  keys,
  splitNodeStatus,
  type Drive,
  type NodeFabricStatus,
  type NodeHeartbeat,
  type NodeLibraryStatus,
  type ObservedCartridge,
  type ObservedLibrary,
} from '@vtl/api';
import type { EmuLibrary } from '@vtl/emulator';
import type { Lease, Store } from '@vtl/store';
import type { Logger } from 'pino';
import type { EmulatorSupervisor } from './emulator-supervisor.js';
import { EmulatorStatusFollower } from './emulator-status.js';

/** Live figures are polled this often; a record is written only when something in it changed. */
export const NODE_STATUS_INTERVAL_MS = 1_000;

/**
 * The heartbeat (keys.nodeHeartbeat) is rewritten this often by the same loop, changed or not:
 * it proves the loop runs, where the lease only proves the keepalive does.
 */
export const NODE_HEARTBEAT_INTERVAL_MS = 2_000;

/**
 * Bytes of records per transaction, below etcd's default request limit (1.5 MiB): sixteen full
 * libraries written at once (a first publish) go in several transactions.
 */
const TXN_BYTES = 1_000_000;

function observe(lib: EmuLibrary): { library: ObservedLibrary; cartridges: ObservedCartridge[] } {
  const drives: Drive[] = lib.drives.map((d) => ({
    index: d.index,
    library: lib.id,
    queue_id: d.queue_id,
    serial: d.serial,
    product: d.product,
    // No host-side device nodes exist for an iSCSI-served library: the target LUN is the address.
    sg: d.device,
    st: '',
    loaded: d.loaded,
    source_slot: d.source_slot,
    activity: d.activity,
    blocks_written: d.blocks_written,
    blocks_read: d.blocks_read,
    iscsi_bytes_written: d.iscsi_bytes_written ?? 0,
    iscsi_bytes_read: d.iscsi_bytes_read ?? 0,
    last_active: d.last_active,
  }));
  return {
    library: { id: lib.id, serial: lib.serial, changer_sg: lib.changer, drives, slots: lib.slots },
    cartridges: lib.cartridges.map((c) => ({
      label: c.label,
      library: lib.id,
      size_bytes: c.size_bytes,
      phys_bytes: c.phys_bytes,
      capacity_bytes: c.capacity_bytes ?? 0,
      modified: c.modified,
      location: c.location,
      local_state: c.stub ? 'evicted' : 'resident',
    })),
  };
}

export interface LibraryRecord {
  value: unknown;
  /** SHA-256 of its JSON: what it is compared by, instead of keeping the JSON (95 KB a full library). */
  digest: string;
  /** Length of its JSON, for sizing transactions. */
  bytes: number;
}

/**
 * The records of the emulator's libraries by key (as splitNodeStatus makes them), each with
 * the digest of its JSON it is compared by. A library whose JSON is unchanged keeps its
 * record from `previous`: a new, equal copy beside the one the publisher holds doubled what an
 * idle nodeagent kept for every library a change elsewhere had left alone; and only the digest
 * is kept of the JSON (some 95 KB for a full 400-slot library; 1.5 MB for 16).
 */
export function libraryRecords(
  node: string,
  seen: EmuLibrary[],
  previous: ReadonlyMap<string, LibraryRecord> = new Map(),
): Map<string, LibraryRecord> {
  return new Map(
    seen.map(observe).map(({ library, cartridges }) => {
      const key = keys.nodeLibraryStatus.one(node, library.id);
      const record: NodeLibraryStatus = { node, id: library.id, library, cartridges };
      const text = JSON.stringify(record);
      const digest = createHash('sha256').update(text).digest('base64');
      const kept = previous.get(key);
      return [key, kept?.digest === digest ? kept : { value: record, digest, bytes: text.length }];
    }),
  );
}

/**
 * Publishes this node's leased status: a small node record (data plane, fabric) and one record
 * per served library, each rewritten only when it changed, so a mint batch in one library
 * rewrites that library's record alone.
 */
export class NodeStatusPublisher {
  /**
   * What each record key last held, as written: the node record's JSON (without updated_at), a
   * library record's digest.
   */
  private written = new Map<string, string>();
  /** False until this process has seen which library records a previous run left behind. */
  private primed = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  /** The emulator's libraries as last seen, for the reconcilers of this node. */
  libraries: EmuLibrary[] = [];
  /** Their library records (keys.nodeLibraryStatus) and JSON, rebuilt only when they changed. */
  private libraryRecords = new Map<string, LibraryRecord>();
  private readonly follower = new EmulatorStatusFollower();
  /** The fabric reconciler's latest report (FC target, registry apply), published with the rest. */
  fabric: NodeFabricStatus | undefined;
  /** When the heartbeat was last written (Date.now()); 0 to write it on the next pass. */
  private heartbeatAt = 0;

  constructor(
    private readonly opts: {
      store: Store;
      lease: Lease;
      node: string;
      supervisor: EmulatorSupervisor;
      logger: Logger;
      /**
       * How long without a heartbeat before readers treat this node as not reporting: the
       * lease's TTL less one beat, so a hung loop is seen within one lease period (8 s by default,
       * for the nodeagent's 10 s lease).
       */
      staleAfterMs?: number;
    },
  ) {}

  start() {
    this.timer = setInterval(() => void this.publish(), NODE_STATUS_INTERVAL_MS);
    return this.publish();
  }

  /**
   * Publishes now; concurrent calls coalesce into one more pass. Resolves after a pass that
   * started after this call, so a caller that just changed the emulator sees its change
   * published (an op answered "unloaded" must not leave the record saying "in the drive").
   */
  publish(): Promise<void> {
    if (!this.running) {
      this.running = this.pass()
        .catch((err) => this.opts.logger.warn({ err }, 'publishing node status failed'))
        .finally(() => {
          this.running = undefined;
        });
      return this.running;
    }
    this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.publish();
    });
    return this.queued;
  }

  private async pass() {
    if (!this.primed) {
      // A previous nodeagent of this node may have left records: rewrite or delete each.
      for (const k of await this.opts.store.listKeys(keys.nodeLibraryStatus.node(this.opts.node)))
        if (!this.written.has(k)) this.written.set(k, '');
      this.primed = true;
    }
    const emulator = this.opts.supervisor.emulator;
    const seen = emulator
      ? await this.follower.read(emulator)
      : { libraries: [], iscsi_sessions: 0, fresh: true };
    if (seen.fresh) {
      this.libraries = seen.libraries;
      this.libraryRecords = libraryRecords(this.opts.node, seen.libraries, this.libraryRecords);
    }
    const want = this.libraryRecords;
    const { node } = splitNodeStatus({
      node: this.opts.node,
      updated_at: '',
      dataplane: { ...this.opts.supervisor.status, iscsi_sessions: seen.iscsi_sessions },
      libraries: [],
      cartridges: [],
      ...(this.fabric ? { fabric: this.fabric } : {}),
    });
    const nodeText = JSON.stringify(node);
    const nodeKey = keys.nodeStatus.one(this.opts.node);
    const stale = [...this.written.keys()].filter((k) => k !== nodeKey && !want.has(k));
    const changed = [...want].filter(([k, w]) => this.written.get(k) !== w.digest);
    const beat = Date.now() - this.heartbeatAt >= NODE_HEARTBEAT_INTERVAL_MS;
    const unchanged = changed.length === 0 && stale.length === 0 && this.written.get(nodeKey) === nodeText;
    if (unchanged && !beat) return;

    // Libraries first, the node record (its data-plane generation) last: a reader never sees a
    // new generation beside library records of the old one.
    const batches: { put: [string, unknown][]; del: string[] }[] = [{ put: [], del: stale }];
    let bytes = 0;
    for (const [k, w] of changed) {
      if (bytes + w.bytes > TXN_BYTES && batches.at(-1)!.put.length > 0) {
        batches.push({ put: [], del: [] });
        bytes = 0;
      }
      batches.at(-1)!.put.push([k, w.value]);
      bytes += w.bytes;
    }
    if (this.written.get(nodeKey) !== nodeText)
      batches.at(-1)!.put.push([nodeKey, { ...node, updated_at: isoNow() }]);
    // Every pass that writes beats too: a write proves the loop runs as well as a beat does.
    const heartbeat: NodeHeartbeat = {
      node: this.opts.node,
      at: isoNow(),
      interval_ms: NODE_HEARTBEAT_INTERVAL_MS,
      stale_after_ms: this.opts.staleAfterMs ?? 8_000,
    };
    batches.at(-1)!.put.push([keys.nodeHeartbeat.one(this.opts.node), heartbeat]);
    for (const b of batches) {
      const txn = this.opts.store.transaction();
      // writes keys.nodeLibraryStatus
      for (const k of b.del) txn.delete(k);
      // writes keys.nodeLibraryStatus, keys.nodeStatus, keys.nodeHeartbeat
      for (const [k, v] of b.put) txn.put(k, v, { lease: this.opts.lease });
      await txn.commit();
    }
    this.heartbeatAt = Date.now();
    for (const k of stale) this.written.delete(k);
    for (const [k, w] of changed) this.written.set(k, w.digest);
    this.written.set(nodeKey, nodeText);
  }

  /** Writes the record again even if unchanged: it vanished with a lost lease. */
  republish(): Promise<void> {
    // Keep the keys (so a library gone meanwhile is still deleted), forget what they held.
    for (const k of this.written.keys()) this.written.set(k, '');
    this.primed = false;
    this.heartbeatAt = 0;
    return this.publish();
  }

  stop() {
    clearInterval(this.timer);
  }
}
