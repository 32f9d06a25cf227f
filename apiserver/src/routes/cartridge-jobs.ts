import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import {
  CARTRIDGE_LABEL,
  CartridgeSpec,
  EvictRequest,
  ExportRequest,
  ImportRequest,
  Job,
  type LibrarySpec,
  badRequest,
  conflict,
  newGeneration,
  notFound,
} from '@vtl/api';
import {
  liveLibraryIds,
  nodeOfLibrary,
  observedCartridges,
  refuseWhileLivenessUnknown,
  requireLive,
  type Snapshot,
  admitJob,
  loadSnapshot,
  cartridgeAbsent,
  cartridgeUnchanged,
} from '@vtl/domain';
import type { AppContext } from '../context.js';
import { validInput } from '../plugins/validate.js';
import { refuseWhileDraining } from '../services/guards.js';
import { systemName } from '../services/identity.js';
import { catalogGenerations, referencedRemote, refuseBusyLabel } from '../services/jobs.js';

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

/** §4.5 rules 3–7: export, evict and import jobs. */
export async function cartridgeJobRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store, journal } = ctx;
  const principalName = (r: { principal?: { name?: string } }) => r.principal?.name ?? '';

  r.post(
    '/api/cartridges/:label/export',
    {
      // Validated where the handler says: its own refusals come first, as they always did.
      attachValidation: true,
      schema: { params: z.object({ label: z.string() }), body: ExportRequest, response: { 201: Job } },
      config: {
        role: 'admin',
        action: 'cartridge.export',
        doc: {
          summary: 'Export a cartridge to a remote (job in detected)',

          status: 201,
        },
      },
    },
    async (request, reply) => {
      const label = request.params.label.toUpperCase();
      await refuseWhileDraining(store, 'Export');
      validInput(request);
      const body = request.body;
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
        (await catalogGenerations(store, body.remote_id, label, system)).some(
          (e) => e.generation === generation,
        )
      )
        throw conflict(
          `Generation ${generation} of ${label} exists in remote ${body.remote_id}; omit generation to mint a new one.`,
        );
      const job = await admitJob(
        store,
        journal,
        {
          ...libraryCopyFields(s, lib, label, body.remote_id, generation, system),
          kind: 'export',
          state: 'detected',
          logical_bytes: observedCartridges(s).get(label)?.size_bytes ?? 0,
          detail: 'waiting for the controller',
          requested_by: principalName(request),
        },
        cartridgeUnchanged(store, label, body.remote_id),
      );
      request.auditSubject = `${label} job:${job.id}`;
      reply.code(201);
      return job;
    },
  );

  r.post(
    '/api/cartridges/:label/evict',
    {
      // Validated where the handler says: its own refusals come first, as they always did.
      attachValidation: true,
      schema: { params: z.object({ label: z.string() }), body: EvictRequest, response: { 201: Job } },
      config: {
        role: 'admin',
        action: 'cartridge.evict',
        doc: {
          summary: 'Evict a cartridge once its bucket copy verifies (job in queued)',

          status: 201,
        },
      },
    },
    async (request, reply) => {
      const label = request.params.label.toUpperCase();
      await refuseWhileDraining(store, 'Evict');
      validInput(request);
      const body = request.body;
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
        throw badRequest(
          `${label} has no export yet; export it first (POST /api/cartridges/${label}/export).`,
        );
      const known = await catalogGenerations(store, body.remote_id, label, system);
      if (!known.some((e) => e.generation === generation && e.library_serial === lib.serial))
        throw badRequest(
          `Generation ${generation} of ${label} is not in the catalog of remote ${body.remote_id}; export first, or rebuild the catalog (POST /api/catalog/rebuild).`,
        );
      const job = await admitJob(
        store,
        journal,
        {
          ...libraryCopyFields(s, lib, label, body.remote_id, generation, system),
          kind: 'evict',
          state: 'queued',
          logical_bytes: seen?.size_bytes ?? 0,
          detail: 'queued',
          requested_by: principalName(request),
        },
        cartridgeUnchanged(store, label, body.remote_id),
      );
      request.auditSubject = `${label} job:${job.id}`;
      reply.code(201);
      return job;
    },
  );

  r.post(
    '/api/cartridges/:label/import',
    {
      // Validated where the handler says: its own refusals come first, as they always did.
      attachValidation: true,
      schema: { params: z.object({ label: z.string() }), body: ImportRequest, response: { 201: Job } },
      config: {
        role: 'admin',
        action: 'cartridge.import',
        doc: {
          summary: 'Import a cartridge generation (job in queued)',

          status: 201,
        },
      },
    },
    async (request, reply) => {
      const label = request.params.label.toUpperCase();
      await refuseWhileDraining(store, 'Import');
      validInput(request);
      const body = request.body;
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
        requested_by: principalName(request),
      };
      let job: Job;
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
        job = await admitJob(
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
        const target = body.target_library ?? soleLiveLibrary(s);
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
        job = await admitJob(
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
      request.auditSubject = `${label} job:${job.id}`;
      reply.code(201);
      return job;
    },
  );
}

/** `target_library` may be omitted when exactly one library is live (§4.5 rule 6). */
function soleLiveLibrary(s: Snapshot): number {
  refuseWhileLivenessUnknown(s);
  const live = liveLibraryIds(s);
  if (live.length !== 1)
    throw badRequest(
      live.length === 0
        ? 'No library is live; apply one first, then give it as target_library.'
        : `target_library is required: ${live.length} libraries are live (${live.join(', ')}).`,
    );
  return live[0] as number;
}
