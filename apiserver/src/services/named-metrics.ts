import { Counter, Gauge, type Registry } from 'prom-client';
import type { Snapshot } from '@vtl/domain';
import { cartridgeView } from './status-view.js';

/**
 * The series that follow Prometheus's conventions beside §6.4's (docs/observability.md): counters
 * named `_total`, cartridges spelled out, and a `name` label (the library's name) next to the
 * spec's `library` label (its serial). §6.4's own series keep their names and labels.
 */
export function namedSeries(registry: Registry) {
  const drive = (name: string, help: string) =>
    new Counter({ name, help, labelNames: ['library', 'name', 'drive'], registers: [registry] });
  const written = drive(
    'vtl_drive_blocks_written_total',
    'Blocks written to the drive since the emulator started',
  );
  const read = drive('vtl_drive_blocks_read_total', 'Blocks read from the drive since the emulator started');
  const iscsiWritten = drive(
    'vtl_drive_iscsi_written_bytes_total',
    'Bytes hosts wrote to the drive over iSCSI (Data-Out) since the emulator started',
  );
  const iscsiRead = drive(
    'vtl_drive_iscsi_read_bytes_total',
    'Bytes hosts read from the drive over iSCSI (Data-In) since the emulator started',
  );
  const cartridges = new Gauge({
    name: 'vtl_cartridges',
    help: 'Cartridges by library and local state (resident, evicted, ...)',
    labelNames: ['library', 'name', 'local_state'],
    registers: [registry],
  });
  const libraryInfo = new Gauge({
    name: 'vtl_library_info',
    help: 'Always 1: a declared library, its serial (library), name and id, to join other series on',
    labelNames: ['library', 'name', 'id'],
    registers: [registry],
  });

  return (s: Snapshot) => {
    [written, read, iscsiWritten, iscsiRead, cartridges, libraryInfo].forEach((m) => m.reset());
    const byId = new Map(s.libraries.map((l) => [l.id, l]));
    const labelsOf = (id: number) => ({
      library: byId.get(id)?.serial ?? String(id),
      name: byId.get(id)?.name ?? '',
    });
    for (const l of s.libraries) libraryInfo.set({ ...labelsOf(l.id), id: String(l.id) }, 1);
    for (const node of s.nodes)
      for (const lib of node.libraries)
        for (const d of lib.drives) {
          const labels = { ...labelsOf(lib.id), drive: String(d.index) };
          written.inc(labels, d.blocks_written);
          read.inc(labels, d.blocks_read);
          iscsiWritten.inc(labels, d.iscsi_bytes_written);
          iscsiRead.inc(labels, d.iscsi_bytes_read);
        }
    for (const c of cartridgeView(s)) cartridges.inc({ ...labelsOf(c.library), local_state: c.local_state });
  };
}

/** Whether each component answers, as the apiserver sees it at scrape time. */
export interface ComponentsUp {
  etcd: boolean;
  controller: boolean;
  nodeagent: boolean;
  emulator: boolean;
}

/**
 * vtl_up{component}: 1 while the component works, 0 when not. The apiserver answering the
 * scrape is its own 1; etcd is up when the store answered the scrape's reads; the controller
 * when one holds the leader election; the nodeagent when a node's leased record is there; the
 * emulator when a node reports its data plane running.
 */
export function upSeries(registry: Registry) {
  const up = new Gauge({
    name: 'vtl_up',
    help: '1 when the component is up, 0 when it is not (apiserver, etcd, controller, nodeagent, emulator)',
    labelNames: ['component'],
    registers: [registry],
  });
  return (c: ComponentsUp) => {
    up.set({ component: 'apiserver' }, 1);
    for (const [component, ok] of Object.entries(c)) up.set({ component }, ok ? 1 : 0);
  };
}

/** The components' state from a snapshot the store answered. */
export function componentsOf(s: Snapshot, controllerLeads: boolean): ComponentsUp {
  return {
    etcd: true,
    controller: controllerLeads,
    nodeagent: s.nodes.length > 0,
    emulator: s.nodes.some((n) => n.dataplane.state === 'running'),
  };
}
