import {
  InitiatorRecord,
  VtlError,
  badRequest,
  isoNow,
  keys,
  normalizeInitiatorName,
  normalizeWwpn,
  notFound,
  scopeString,
  type CreateInitiatorRequest,
  type UpdateInitiatorRequest,
  type TargetsView,
} from '@vtl/api';
import { waitFor } from '@vtl/reconcile';
import type { Store } from '@vtl/store';
import {
  createInitiatorRecord,
  deleteInitiatorRecord,
  listNodeStatus,
  loadSnapshot,
  updateInitiatorRecord,
} from '@vtl/domain';
import { setPortDisabled } from './settings.js';
import { targetsView } from './targets-view.js';
import { chapChange } from './initiator-chap.js';

/** How long a write waits for every nodeagent to apply it before answering with `error`. */
export const LIVE_APPLY_WAIT_MS = 15_000;

/** GET /api/targets. */
export async function readTargets(store: Store): Promise<TargetsView> {
  const [records, snapshot] = await Promise.all([
    store.list(keys.initiators.prefix, InitiatorRecord),
    loadSnapshot(store),
  ]);
  return targetsView(
    records.items.map((i) => i.value),
    snapshot.nodes,
    snapshot.libraries.filter((l) => !l.deleting).map((l) => l.id),
  );
}

/** A path `{wwpn}` in any accepted form to its registry name; an unparsable one names nobody (404). */
function registryName(input: string): string {
  const parsed = normalizeInitiatorName(decodeURIComponent(input));
  if (!parsed) throw notFound(`No initiator "${input}" is registered; GET /api/targets lists them.`);
  return parsed.name;
}

/** Port scope in naa. form; refused for iSCSI initiators, which have no FC ports. */
function portScope(ports: string[] | undefined, fabric: 'fc' | 'iscsi'): string {
  if (fabric === 'iscsi' && ports !== undefined)
    throw badRequest('ports scopes FC target ports; leave it out for an iSCSI initiator (fabric iscsi).');
  return scopeString(ports?.map((p) => normalizeWwpn(p) as string));
}

/**
 * Waits until every node that reports its fabric has applied the registry at `revision`, and
 * returns the refreshed view. A node that failed or did not finish leaves `error` in the view;
 * the registry change stands either way (§2.3a).
 */
async function afterWrite(store: Store, revision: string): Promise<TargetsView> {
  const target = BigInt(revision);
  const pending = async () => {
    const nodes = await listNodeStatus(store);
    return nodes.filter(
      (n) =>
        n.fabric !== undefined &&
        n.dataplane.state === 'running' &&
        (n.fabric.registry_revision === '' || BigInt(n.fabric.registry_revision) < target),
    );
  };
  let late: string[] = [];
  await waitFor(async () => (late = (await pending()).map((n) => n.node)).length === 0, {
    timeoutMs: LIVE_APPLY_WAIT_MS,
    intervalMs: 100,
  }).catch(() => undefined);
  const view = await readTargets(store);
  if (late.length > 0) {
    const note = `The change is recorded but node(s) ${late.join(', ')} have not applied it yet; they apply it when they can (GET /api/targets shows progress).`;
    view.error = view.error ? `${view.error}; ${note}` : note;
  }
  return view;
}

/** POST /api/targets/acls: 400 on a malformed or registered name; nothing written on refusal. */
export async function createInitiator(store: Store, body: CreateInitiatorRequest): Promise<TargetsView> {
  const parsed = normalizeInitiatorName(body.wwpn);
  const fabric = body.fabric ?? parsed?.fabric ?? 'fc';
  if (!parsed || parsed.fabric !== fabric)
    throw badRequest(
      fabric === 'fc'
        ? `wwpn "${body.wwpn}" is not a WWPN: use naa.<16 hex>, colon-separated bytes or 16 hex digits.`
        : `wwpn "${body.wwpn}" is not an iSCSI initiator name: use iqn.YYYY-MM.<domain>[:<id>] or eui.<16 hex>.`,
    );
  const chap = chapChange(body.chap, fabric);
  const record: InitiatorRecord = {
    wwpn: parsed.name,
    alias: body.alias ?? '',
    fabric,
    ports: portScope(body.ports, fabric),
    libraries: scopeString(body.libraries),
    created_at: isoNow(),
  };
  const created = await createInitiatorRecord(store, record, chap);
  if (!created)
    throw badRequest(
      `Initiator ${record.wwpn} is already registered; change it with PUT /api/targets/acls/${record.wwpn}.`,
    );
  return afterWrite(store, created.modRevision);
}

/** PUT /api/targets/acls/{wwpn}: only the fields sent change. */
export async function updateInitiator(
  store: Store,
  wwpn: string,
  body: UpdateInitiatorRequest,
): Promise<TargetsView> {
  const name = registryName(wwpn);
  const key = keys.initiators.one(name);
  const current = await store.get(key, InitiatorRecord);
  if (!current)
    throw notFound(`No initiator ${name} is registered; register it with POST /api/targets/acls.`);
  const ports = 'ports' in body ? portScope(body.ports, current.value.fabric) : undefined;
  const chap = chapChange(body.chap, current.value.fabric);
  const next = (cur: InitiatorRecord): InitiatorRecord => ({
    ...cur,
    ...(body.alias !== undefined ? { alias: body.alias } : {}),
    ...(ports !== undefined ? { ports } : {}),
    ...('libraries' in body ? { libraries: scopeString(body.libraries) } : {}),
  });
  const updated = await updateInitiatorRecord(store, name, next, chap);
  if (!updated) throw notFound(`Initiator ${name} was deregistered meanwhile.`);
  return afterWrite(store, updated.modRevision);
}

/** DELETE /api/targets/acls/{wwpn}: 400 while logged in unless `force`. */
export async function deleteInitiator(store: Store, wwpn: string, force: boolean): Promise<TargetsView> {
  const name = registryName(wwpn);
  const key = keys.initiators.one(name);
  const current = await store.get(key, InitiatorRecord);
  if (!current) throw notFound(`No initiator ${name} is registered; GET /api/targets lists them.`);
  if (!force) {
    const seen = (await readTargets(store)).initiators.find((i) => i.wwpn === name);
    if (seen?.logged_in)
      throw badRequest(
        `Initiator ${name} has a live session; log the host out first, or send force=1 to drop it.`,
        { wwpn: name },
      );
  }
  if (!(await deleteInitiatorRecord(store, name, current.modRevision)))
    throw new VtlError('conflict', `Initiator ${name} changed while deleting it; retry.`);
  const { revision } = await store.list(keys.initiators.prefix, InitiatorRecord);
  return afterWrite(store, revision);
}

/** PUT /api/targets/ports: the port joins or leaves `fc.disabled_ports`. */
export async function setPortServing(store: Store, wwn: string, serving: boolean): Promise<TargetsView> {
  const updated = await setPortDisabled(store, wwn, serving);
  return afterWrite(store, updated.modRevision);
}
