import {
  TargetsView as TargetsViewSchema,
  chapStatus,
  scopeIncludes,
  type FcPort,
  type InitiatorRecord,
  type InitiatorView,
  type NodeFabricStatus,
  type NodeStatus,
  type ObservedAcl,
  type TargetLun,
  type TargetsView,
  type UnmanagedAcl,
} from '@vtl/api';
import type { ViewCache } from './view-cache.js';

/** A node that reports its fabric: the only ones whose kernel and emulator the view can speak for. */
type FabricNode = NodeStatus & { fabric: NodeFabricStatus };

const sameNumbers = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length &&
  [...a].sort((x, y) => x - y).every((v, i) => v === [...b].sort((x, y) => x - y)[i]);

/** LUNs of the table an initiator with this library scope must see. */
export function scopedLuns(luns: readonly TargetLun[], libraries: string): number[] {
  return luns.filter((l) => scopeIncludes(libraries, l.library)).map((l) => l.lun);
}

/** FC ports (on any node) an initiator's ACL must exist on: serving and inside its port scope. */
function portsInScope(ports: readonly FcPort[], scope: string): FcPort[] {
  return ports.filter((p) => p.serving && scopeIncludes(scope, p.wwpn));
}

function fcInitiator(rec: InitiatorRecord, nodes: FabricNode[]): InitiatorView {
  let applied = true;
  let loggedIn = false;
  let portState = '';
  for (const node of nodes) {
    const { ports, luns, acls } = node.fabric.fc;
    const want = scopedLuns(luns, rec.libraries);
    const mine = acls.filter((a) => a.wwpn === rec.wwpn);
    const scoped = portsInScope(ports, rec.ports);
    for (const port of scoped) {
      const acl = mine.find((a) => a.port === port.wwpn);
      if (!acl || !sameNumbers(acl.mapped_luns, want)) applied = false;
    }
    // An ACL left on a port outside the scope is access the registry does not grant.
    if (mine.some((a) => !scoped.some((p) => p.wwpn === a.port))) applied = false;
    const session = mine.find((a) => a.logged_in);
    if (session) {
      loggedIn = true;
      portState ||= ports.find((p) => p.wwpn === session.port)?.state ?? '';
    }
  }
  return { ...rec, logged_in: loggedIn, port_state: portState, applied, chap: chapStatus(undefined) };
}

function iscsiInitiator(rec: InitiatorRecord, nodes: FabricNode[]): InitiatorView {
  const running = nodes.filter((n) => n.dataplane.state === 'running');
  const loggedIn = running.some((n) => n.fabric.iscsi_logins.includes(rec.wwpn));
  const applied =
    running.length > 0 &&
    running.every((n) => {
      const served = [...new Set(n.fabric.fc.luns.map((l) => l.library))];
      const want = served.filter((id) => scopeIncludes(rec.libraries, id));
      const told = n.fabric.iscsi_access.find((a) => a.name === rec.wwpn);
      return want.length === 0
        ? !told || told.libraries.length === 0
        : !!told && sameNumbers(told.libraries, want);
    });
  return {
    ...rec,
    logged_in: loggedIn,
    port_state: loggedIn ? 'Online' : '',
    applied,
    chap: chapStatus(rec.chap),
  };
}

/** §2.3a: the registry joined with what every node's kernel and emulator hold now. */
export function targetsView(
  records: readonly InitiatorRecord[],
  nodeStatus: readonly NodeStatus[],
  libraryIds: readonly number[],
): TargetsView {
  const nodes = nodeStatus.filter((n): n is FabricNode => n.fabric !== undefined);
  const ports = nodes.flatMap((n) => n.fabric.fc.ports);
  const luns = nodes.flatMap((n) => n.fabric.fc.luns);
  const known = new Set(records.filter((r) => r.fabric === 'fc').map((r) => r.wwpn));
  const unmanaged: UnmanagedAcl[] = nodes
    .flatMap((n) => n.fabric.fc.acls)
    .filter((a: ObservedAcl) => !known.has(a.wwpn))
    .map(({ port, wwpn, mapped_luns, logged_in }) => ({ port, wwpn, mapped_luns, logged_in }));
  const errors = nodes.filter((n) => n.fabric.error).map((n) => `${n.node}: ${n.fabric.error}`);
  if (nodes.length === 0)
    errors.push(
      'No nodeagent has reported its targets yet, so the LUN table is unknown; check that the nodeagent runs.',
    );
  const view: TargetsView = {
    fc: { ports, no_hba: ports.length === 0 },
    luns,
    libraries: [...libraryIds].sort((a, b) => a - b),
    initiators: [...records]
      .sort((a, b) => a.wwpn.localeCompare(b.wwpn))
      .map((r) => (r.fabric === 'fc' ? fcInitiator(r, nodes) : iscsiInitiator(r, nodes))),
  };
  if (unmanaged.length > 0) view.unmanaged = unmanaged;
  if (errors.length > 0) view.error = errors.join('; ');
  return view;
}

/**
 * GET /api/targets as bytes, serialized through its schema once per change of what it shows:
 * the node records (fabric, data plane), the initiator registry and the libraries. Cartridge
 * and per-library records, which change all through a busy day, are not read.
 */
export function targetsBytes(views: ViewCache): Buffer {
  return views.part('targets-bytes', views.targetsFingerprint(), () => {
    const ids = views
      .libraryRecords()
      .filter((l) => !l.deleting)
      .map((l) => l.id);
    return Buffer.from(
      JSON.stringify(TargetsViewSchema.parse(targetsView(views.initiators(), views.nodeRecords(), ids))),
    );
  });
}
