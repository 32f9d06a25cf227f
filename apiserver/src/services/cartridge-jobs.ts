import {
  CARTRIDGE_LABEL,
  type CartridgeSpec,
  type EvictRequest,
  type ExportRequest,
  type ImportRequest,
  type Job,
  type LibrarySpec,
  badRequest,
  conflict,
  newGeneration,
  notFound,
} from '@vtl/api';
import {
  nodeOfLibrary,
  observedCartridges,
  requireLive,
  soleLiveLibrary,
  type Snapshot,
  admitJob,
  loadSnapshot,
  cartridgeAbsent,
  cartridgeUnchanged,
} from '@vtl/domain';
import type { z } from 'zod';
import type { AppContext } from '../context.js';
import { systemName } from './identity.js';
import { catalogGenerations, referencedRemote, refuseBusyLabel } from './jobs.js';

/*
 * §4.5 rules 3–7: the export, evict and import a request asks for, checked against the records
 * and admitted as a job (admitJob, domain/src/records/jobs.ts), which each returns.
 */

/** A job request: the cartridge (label in capitals), the validated body, who asks. */
type Requested<T extends z.ZodType> = {
  ctx: AppContext;
  label: string;
  body: z.infer<T>;
  requestedBy: string;
};

/** An export of a local cartridge to a remote (job in detected). */
export async function requestExport({
  ctx: { store, journal },
  label,
  body,
  requestedBy,
}: Requested<typeof ExportRequest>): Promise<Job> {
  const s = await loadSnapshot(store);
  const spec = cartridgeOf(s, label);
  const lib = libraryOf(s, spec);
  await referencedRemote(store, body.remote_id);
  if (observedCartridges(s).get(label)?.local_state === 'evicted')
    throw badRequest(`${label} is an evicted stub: its data is in the bucket already; import it first.`);
  refuseBusyLabel(s.jobs, label);
  const system = await systemName(store);
  const generation = body.generation ?? newGeneration();
  if (
    (await catalogGenerations(store, body.remote_id, label, system)).some((e) => e.generation === generation)
  )
    throw conflict(
      `Generation ${generation} of ${label} exists in remote ${body.remote_id}; omit generation to mint a new one.`,
    );
  return admitJob(
    store,
    journal,
    {
      ...libraryCopyFields(s, lib, label, body.remote_id, generation, system),
      kind: 'export',
      state: 'detected',
      logical_bytes: observedCartridges(s).get(label)?.size_bytes ?? 0,
      detail: 'waiting for the controller',
      requested_by: requestedBy,
    },
    cartridgeUnchanged(store, label, body.remote_id),
  );
}

/** An eviction of a cartridge whose bucket copy is in the catalog (job in queued). */
export async function requestEvict({
  ctx: { store, journal },
  label,
  body,
  requestedBy,
}: Requested<typeof EvictRequest>): Promise<Job> {
  const s = await loadSnapshot(store);
  const spec = cartridgeOf(s, label);
  const lib = libraryOf(s, spec);
  await referencedRemote(store, body.remote_id);
  const seen = observedCartridges(s).get(label);
  if (seen?.local_state === 'evicted') throw badRequest(`${label} is already evicted.`);
  if (seen?.location.startsWith('drive:'))
    throw badRequest(`${label} is in ${seen.location.replace(':', ' ')}; unload it first.`);
  refuseBusyLabel(s.jobs, label);
  const system = await systemName(store);
  const generation = body.generation ?? spec.last_export_gen;
  if (!generation)
    throw badRequest(`${label} has no export yet; export it first (POST /api/cartridges/${label}/export).`);
  const known = await catalogGenerations(store, body.remote_id, label, system);
  if (!known.some((e) => e.generation === generation && e.library_serial === lib.serial))
    throw badRequest(
      `Generation ${generation} of ${label} is not in the catalog of remote ${body.remote_id}; export first, or rebuild the catalog (POST /api/catalog/rebuild).`,
    );
  return admitJob(
    store,
    journal,
    {
      ...libraryCopyFields(s, lib, label, body.remote_id, generation, system),
      kind: 'evict',
      state: 'queued',
      logical_bytes: seen?.size_bytes ?? 0,
      detail: 'queued',
      requested_by: requestedBy,
    },
    cartridgeUnchanged(store, label, body.remote_id),
  );
}

/** An import of a generation from a remote: of an evicted stub, or into a library (job in queued). */
export async function requestImport({
  ctx: { store, journal },
  label,
  body,
  requestedBy,
}: Requested<typeof ImportRequest>): Promise<Job> {
  if (!CARTRIDGE_LABEL.test(label))
    throw badRequest(`label "${label}" must be six A-Z0-9 characters plus the media suffix.`);
  await referencedRemote(store, body.remote_id);
  const s = await loadSnapshot(store);
  const spec = s.cartridges.find((c) => c.label === label);
  const common = {
    kind: 'import' as const,
    state: 'queued' as const,
    label,
    remote_id: body.remote_id,
    generation: body.generation,
    detail: 'queued',
    requested_by: requestedBy,
  };
  if (spec) {
    // §4.5 rule 5: same-system re-import of an evicted stub.
    const seen = observedCartridges(s).get(label);
    if (spec.deleting || seen?.local_state !== 'evicted')
      throw conflict(
        `${label} exists here and is not an evicted stub; delete it first or import another label.`,
      );
    refuseBusyLabel(s.jobs, label);
    const lib = libraryOf(s, spec);
    const system = body.system_name || (await systemName(store));
    const known = await catalogGenerations(store, body.remote_id, label, system);
    const entry = known.find((e) => e.generation === body.generation);
    if (!entry)
      throw badRequest(
        `Generation ${body.generation} of ${label} (system ${system}) is not in the catalog of remote ${body.remote_id}; GET /api/catalog?remote_id=${body.remote_id} lists what is.`,
      );
    return admitJob(
      store,
      journal,
      {
        ...common,
        library: lib.id,
        system_name: system,
        library_serial: entry.library_serial,
        node: nodeOfLibrary(s, lib) ?? '',
        logical_bytes: entry.logical_bytes,
      },
      cartridgeUnchanged(store, label, body.remote_id),
    );
  } else {
    // §4.5 rule 6: into a library through its import/export slot.
    if (!body.system_name)
      throw badRequest(
        `${label} is not here: give system_name (the exporting appliance's name) and target_library to import it into a library.`,
      );
    const target =
      body.target_library ??
      soleLiveLibrary(
        s,
        'target_library',
        'No library is live; apply one first, then give it as target_library.',
      );
    const lib = s.libraries.find((l) => l.id === target && !l.deleting);
    const notLive = `target_library ${target} is not live; apply it first or pick a live library.`;
    if (!lib) throw badRequest(notLive);
    requireLive(s, lib, notLive);
    const known = await catalogGenerations(store, body.remote_id, label, body.system_name);
    const entry = known.find((e) => e.generation === body.generation);
    if (!entry)
      throw badRequest(
        `Generation ${body.generation} of ${label} (system ${body.system_name}) is not in the catalog of remote ${body.remote_id}; rebuild it (POST /api/catalog/rebuild) or check the names.`,
      );
    refuseBusyLabel(s.jobs, label);
    return admitJob(
      store,
      journal,
      {
        ...common,
        library: lib.id,
        system_name: body.system_name,
        library_serial: entry.library_serial,
        target_library: lib.id,
        node: nodeOfLibrary(s, lib) ?? '',
        logical_bytes: entry.logical_bytes,
      },
      cartridgeAbsent(store, label, body.remote_id),
    );
  }
}

/**
 * The fields an export or evict job shares: which copy of the cartridge (remote, generation,
 * system, this library's serial) and the node whose agent runs it.
 */
function libraryCopyFields(
  s: Snapshot,
  lib: LibrarySpec,
  label: string,
  remoteId: number,
  generation: string,
  system: string,
) {
  return {
    label,
    library: lib.id,
    remote_id: remoteId,
    generation,
    system_name: system,
    library_serial: lib.serial,
    node: nodeOfLibrary(s, lib) ?? '',
  };
}

/** The cartridge a job path names: 404 when unknown or being deleted. */
function cartridgeOf(s: Snapshot, label: string): CartridgeSpec {
  const spec = s.cartridges.find((c) => c.label === label && !c.deleting);
  if (!spec) throw notFound(`No cartridge ${label}; GET /api/cartridges lists them.`);
  return spec;
}

function libraryOf(s: Snapshot, spec: CartridgeSpec) {
  const lib = s.libraries.find((l) => l.id === spec.library && !l.deleting);
  if (!lib) throw notFound(`Cartridge ${spec.label} belongs to no library here.`);
  return lib;
}
