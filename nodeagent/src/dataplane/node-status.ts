import {
  isoNow,
  keys,
  type Drive,
  type NodeFabricStatus,
  type NodeStatus,
  type ObservedCartridge,
  type ObservedLibrary,
} from '@vtl/api';
import type { EmuLibrary } from '@vtl/emulator';
import type { Lease, Store } from '@vtl/store';
import type { Logger } from 'pino';
import type { EmulatorSupervisor } from './emulator-supervisor.js';

/** Live figures are polled this often; the record is written only when something changed. */
export const NODE_STATUS_INTERVAL_MS = 1_000;

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
    last_active: d.last_active,
  }));
  return {
    library: { id: lib.id, serial: lib.serial, changer_sg: lib.changer, drives, slots: lib.slots },
    cartridges: lib.cartridges.map((c) => ({
      label: c.label,
      library: lib.id,
      size_bytes: c.size_bytes,
      phys_bytes: c.phys_bytes,
      modified: c.modified,
      location: c.location,
      local_state: c.stub ? 'evicted' : 'resident',
    })),
  };
}

/** Publishes this node's leased status record from what the emulator reports. */
export class NodeStatusPublisher {
  private last = '';
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  /** The emulator's libraries as last seen, for the reconcilers of this node. */
  libraries: EmuLibrary[] = [];
  /** The fabric reconciler's latest report (FC target, registry apply), published with the rest. */
  fabric: NodeFabricStatus | undefined;

  constructor(
    private readonly opts: {
      store: Store;
      lease: Lease;
      node: string;
      supervisor: EmulatorSupervisor;
      logger: Logger;
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
    const emulator = this.opts.supervisor.emulator;
    const seen = emulator ? await emulator.status() : { libraries: [], iscsi_sessions: 0 };
    this.libraries = seen.libraries;
    const observed = this.libraries.map(observe);
    const status: NodeStatus = {
      node: this.opts.node,
      updated_at: '',
      dataplane: { ...this.opts.supervisor.status, iscsi_sessions: seen.iscsi_sessions },
      libraries: observed.map((s) => s.library),
      cartridges: observed.flatMap((s) => s.cartridges),
      ...(this.fabric ? { fabric: this.fabric } : {}),
    };
    const fingerprint = JSON.stringify(status);
    if (fingerprint === this.last) return;
    await this.opts.store.put(
      keys.nodeStatus.one(this.opts.node),
      { ...status, updated_at: isoNow() },
      { lease: this.opts.lease },
    );
    this.last = fingerprint;
  }

  /** Writes the record again even if unchanged: it vanished with a lost lease. */
  republish(): Promise<void> {
    this.last = '';
    return this.publish();
  }

  stop() {
    clearInterval(this.timer);
  }
}
