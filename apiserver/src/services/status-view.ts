import {
  isoNow,
  type Cartridge,
  type Drive,
  type LibrarySpec,
  type LiveLibrary,
  type PoolFigures,
  type Slot,
  type StatusView,
} from '@vtl/api';
import { observedCartridges, observedLibrary, type Snapshot } from '@vtl/domain';
import { libraryLifecycle } from './library-lifecycle.js';

const NO_HBA_DETAIL = 'No Fibre Channel HBA on this appliance; hosts reach the libraries over iSCSI.';

interface LibraryLive {
  library: LiveLibrary;
  drives: Drive[];
  slots: Slot[];
}

/** One library as the status view shows it: configuration joined with what the data plane serves. */
export function liveLibrary(s: Snapshot, lib: LibrarySpec): LibraryLive {
  const seen = observedLibrary(s, lib.id);
  const pool = s.pools.find((p) => p.id === lib.home_pool);
  return {
    library: {
      id: lib.id,
      product: lib.product,
      serial: lib.serial,
      home_dir: pool?.path ?? '',
      num_slots: lib.num_slots,
      num_ie: lib.num_ie,
      num_drives: lib.num_drives,
      changer_sg: seen?.changer_sg ?? '',
      live: seen !== undefined,
      name: lib.name,
    },
    drives: seen?.drives ?? [],
    slots: seen?.slots ?? [],
  };
}

/** All cartridges, §2.7: the records joined with what the nodeagents observe on disk. */
export function cartridgeView(s: Snapshot): Cartridge[] {
  const seen = observedCartridges(s);
  return s.cartridges
    .filter((c) => !c.deleting)
    .map((c) => {
      const o = seen.get(c.label);
      return {
        label: c.label,
        library: c.library,
        size_bytes: o?.size_bytes ?? 0,
        phys_bytes: o?.phys_bytes ?? 0,
        capacity_bytes: o?.capacity_bytes ?? 0,
        modified: o?.modified ?? c.created_at,
        location: o?.location ?? 'missing',
        local_state: o?.local_state ?? 'resident',
        last_export_gen: c.last_export_gen,
      };
    })
    .sort((a, b) => a.label.localeCompare(b.label));
}

export function poolFigures(s: Snapshot): PoolFigures[] {
  return s.pools.flatMap((p) => {
    const figures = s.poolStatus.get(p.id)?.figures;
    return figures ? [figures] : [];
  });
}

/** The iSCSI targets the running emulators serve, and their live host sessions. */
export function iscsiFabric(s: Snapshot) {
  const running = s.nodes.filter((n) => n.dataplane.state === 'running' && n.dataplane.iscsi_portal);
  return {
    present: running.length > 0,
    portals: running.map((n) => n.dataplane.iscsi_portal),
    sessions: running.reduce((sum, n) => sum + n.dataplane.iscsi_sessions, 0),
  };
}

/** §2.9 `fc` and `fabrics.fc` from what every node's FC target reports (no HBA anywhere: idle, healthy). */
export function fcFabric(s: Snapshot) {
  const withHba = s.nodes.filter((n) => n.fabric && !n.fabric.fc.no_hba).map((n) => n.fabric!.fc);
  if (withHba.length === 0)
    return {
      status: {
        target_wwn: '' as const,
        verified: false,
        no_hba: true,
        detail: NO_HBA_DETAIL,
        verified_at: '',
      },
      fabric: { present: false, verified: false, detail: NO_HBA_DETAIL, sessions: 0 },
    };
  const verified = withHba.every((f) => f.verified);
  const detail = withHba.map((f) => f.detail).join('; ');
  const verifiedAt = verified
    ? withHba
        .map((f) => f.verified_at)
        .sort()
        .at(-1)!
    : '';
  const sessions = withHba.reduce((n, f) => n + f.acls.filter((a) => a.logged_in).length, 0);
  return {
    status: { target_wwn: '' as const, verified, no_hba: false, detail, verified_at: verifiedAt },
    fabric: { present: true, verified, detail, sessions },
  };
}

/** The per-library cartridge entries of GET /api/status: a library's cartridges, fewer fields. */
export function libraryCartridges(cartridges: readonly Cartridge[], libraryId: number) {
  return cartridges
    .filter((c) => c.library === libraryId)
    .map(({ label, library, size_bytes, phys_bytes, modified, location }) => ({
      label,
      library,
      size_bytes,
      phys_bytes,
      modified,
      location,
    }));
}

export function statusView(s: Snapshot): StatusView {
  const fc = fcFabric(s);
  const cartridges = cartridgeView(s);
  return {
    updated_at: isoNow(),
    libraries: s.libraries
      .filter((l) => !l.deleting)
      .map((lib) => ({
        ...liveLibrary(s, lib),
        cartridges: libraryCartridges(cartridges, lib.id),
        ...libraryLifecycle(s, lib.id),
      })),
    pools: poolFigures(s),
    fc: fc.status,
    cartridges,
    fabrics: {
      fc: fc.fabric,
      iscsi: iscsiFabric(s),
    },
  };
}
