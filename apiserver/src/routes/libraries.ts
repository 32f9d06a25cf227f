import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  ApplyResponse,
  ConfirmRequest,
  DeclareLibraryRequest,
  DeclareLibraryResponse,
  DeleteLibraryRequest,
  DeleteLibraryResponse,
  LibraryRow,
  NextLabelResponse,
  badRequest,
  findDriveModel,
  findLibraryVariant,
  isoNow,
  keys,
  notFound,
  randomDriveSerial,
  randomSerial,
  type LibrarySpec,
} from '@vtl/api';
import type { AppContext } from '../context.js';
import { idParam, parse } from '../plugins/validate.js';
import { libraryState, loadSnapshot, nodeOfLibrary, refuseWithLoadedDrives, type Snapshot } from '@vtl/store';
import { nextLabels, usedVolsers } from '../services/labels.js';
import { refuseWhileDraining } from '../services/guards.js';
import { runExclusiveOp } from '../services/exclusive-ops.js';
import { viewsOf } from '../services/views.js';

const DEFAULT_SLOTS = 100;
const DEFAULT_IE = 4;

export function findLibrary(s: Snapshot, id: number): LibrarySpec {
  const lib = s.libraries.find((l) => l.id === id);
  if (!lib) throw notFound(`No library ${id}; GET /api/libraries lists them.`);
  return lib;
}

const row = (s: Snapshot, l: LibrarySpec) => LibraryRow.parse({ ...l, state: libraryState(s, l.id) });
/** The library row of GET /api/libraries, for the support bundle. */
export const libraryRow = row;

/** Checks a declare body against the models catalog and the pool; returns the record to write. */
function planLibrary(s: Snapshot, body: DeclareLibraryRequest, id: number): LibrarySpec {
  const found = findLibraryVariant(body.product);
  if (!found || !found.variant.creatable || !found.model.creatable)
    throw badRequest(
      `product "${body.product}" cannot be created; use 3573-TL or 03584L32 (GET /api/models).`,
    );
  const drive = findDriveModel(body.drive_product);
  if (!drive)
    throw badRequest(`drive_product "${body.drive_product}" is unknown; GET /api/models lists the drives.`);
  if (drive.family !== found.variant.family)
    throw badRequest(
      `drive_product ${drive.product} does not fit a ${body.product} frame; pick an IBM ULT3580 drive.`,
    );
  if (body.num_drives > found.model.max_drives)
    throw badRequest(`num_drives must be 1 to ${found.model.max_drives} for ${body.product}.`);
  const pool = s.pools.find((p) => p.id === body.pool_id);
  if (!pool) throw badRequest(`pool_id ${body.pool_id} names no pool; GET /api/pools lists them.`);
  if (s.poolStatus.get(pool.id)?.state !== 'active')
    throw badRequest(`Pool "${pool.name}" is not active; check its node (GET /api/pools shows why).`);
  const home = s.libraries.find((l) => l.home_pool === pool.id);
  if (home)
    throw badRequest(`Pool "${pool.name}" already homes library ${home.id} (${home.name}); use a free pool.`);

  const serials = new Set(s.libraries.map((l) => l.serial));
  let serial = randomSerial('VL', 8);
  while (serials.has(serial)) serial = randomSerial('VL', 8);
  const driveSerials = new Set<string>();
  while (driveSerials.size < body.num_drives) driveSerials.add(randomDriveSerial());
  return {
    id,
    name: body.name || serial,
    vendor: found.model.vendor,
    product: body.product,
    variant: found.variant.display,
    serial,
    drive_model: drive.product,
    drive_serials: [...driveSerials],
    num_drives: body.num_drives,
    num_slots: body.num_slots || DEFAULT_SLOTS,
    num_ie: body.num_map || DEFAULT_IE,
    label_prefix: body.label_prefix,
    media_dir: `${pool.path.replace(/\/$/, '')}/${serial}`,
    home_pool: pool.id,
    created_at: isoNow(),
    deleting: false,
  };
}

export async function libraryRoutes(app: FastifyInstance, ctx: AppContext) {
  const { store, journal } = ctx;

  app.get(
    '/api/libraries',
    {
      config: { role: 'read-only', doc: { summary: 'Library rows (§2.14)', response: z.array(LibraryRow) } },
    },
    async (request, reply) => {
      const views = await viewsOf(ctx).fresh(request.arrivedAt);
      const body = views.memo('library-rows', () => {
        const s = views.snapshot();
        return JSON.stringify(s.libraries.filter((l) => !l.deleting).map((l) => row(s, l)));
      });
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );

  app.post(
    '/api/libraries',
    {
      config: {
        role: 'admin',
        action: 'library.create',
        doc: {
          summary: 'Declare a library',
          body: DeclareLibraryRequest,
          response: DeclareLibraryResponse,
          status: 201,
        },
      },
    },
    async (request, reply) => {
      const body = parse(DeclareLibraryRequest, request.body);
      const s = await loadSnapshot(store);
      const lib = planLibrary(s, body, await store.nextId('libraries'));
      const ok = await store
        .transaction()
        .ifAbsent(keys.poolHome(lib.home_pool))
        .ifAbsent(keys.librarySerial(lib.serial))
        .put(keys.poolHome(lib.home_pool), lib.id)
        .put(keys.librarySerial(lib.serial), lib.id)
        .put(keys.libraries.one(lib.id), lib)
        .commit();
      if (!ok)
        throw badRequest(`Pool ${lib.home_pool} was just claimed by another library; use a free pool.`);
      await journal.emit({
        kind: 'library_created',
        subject: lib.name,
        detail: `${lib.product} with ${lib.num_drives} × ${lib.drive_model}, ${lib.num_slots} slots, ${lib.num_ie} I/E`,
        data: { library: lib.id, serial: lib.serial },
      });
      reply.status(201);
      return DeclareLibraryResponse.parse({
        library: lib.id,
        serial: lib.serial,
        drive_serials: lib.drive_serials,
        state: 'pending_restart',
        note: 'Declared. Nothing is served until POST /api/libraries/apply, which restarts the tape emulator: every host session drops for a minute or two.',
      });
    },
  );

  app.get<{ Params: { lib: string } }>(
    '/api/libraries/:lib/next-label',
    {
      config: {
        role: 'read-only',
        doc: { summary: 'The label a mint would generate next', response: NextLabelResponse },
      },
    },
    async (request) => {
      const s = await loadSnapshot(store);
      const lib = findLibrary(s, idParam(request.params.lib, 'library'));
      const suffix = findDriveModel(lib.drive_model)?.suffix ?? '';
      const [label] = nextLabels(lib.label_prefix, suffix, await usedVolsers(store, s), 1);
      return NextLabelResponse.parse({ label, prefix: lib.label_prefix, suffix });
    },
  );

  app.post(
    '/api/libraries/apply',
    {
      config: {
        role: 'admin',
        action: 'library.apply',
        doc: {
          summary: 'Activate declared libraries',
          body: ConfirmRequest('apply'),
          response: ApplyResponse,
        },
      },
    },
    async (request) => {
      parse(ConfirmRequest('apply'), request.body);
      const result = await runExclusiveOp(
        store,
        { kind: 'apply', executor: 'controller', params: {} },
        'Apply',
        ctx.config.opTimeoutMs,
        (s) => refuseWithLoadedDrives(s, 'Apply'),
      );
      return ApplyResponse.parse(result);
    },
  );

  app.post(
    '/api/system/dataplane-restart',
    {
      config: {
        role: 'admin',
        action: 'system.dataplane_restart',
        doc: { summary: 'Restart the data plane', body: ConfirmRequest('restart'), response: ApplyResponse },
      },
    },
    async (request) => {
      parse(ConfirmRequest('restart'), request.body);
      await refuseWhileDraining(store, 'A data-plane restart');
      const result = await runExclusiveOp(
        store,
        { kind: 'dataplane_restart', executor: 'controller', params: {} },
        'A data-plane restart',
        ctx.config.opTimeoutMs,
      );
      return ApplyResponse.parse(result);
    },
  );

  app.delete<{ Params: { lib: string } }>(
    '/api/libraries/:lib',
    {
      config: {
        role: 'admin',
        action: 'library.delete',
        doc: { summary: 'Delete a library', body: DeleteLibraryRequest, response: DeleteLibraryResponse },
      },
    },
    async (request) => {
      const id = idParam(request.params.lib, 'library');
      const s = await loadSnapshot(store);
      const lib = findLibrary(s, id);
      const body = parse(DeleteLibraryRequest, request.body);
      if (body.confirm !== lib.name && body.confirm !== lib.serial)
        throw badRequest(`confirm must be the library name "${lib.name}" or its serial exactly.`);
      await refuseWhileDraining(store, 'Library delete');
      const node = nodeOfLibrary(s, lib);
      if (!node) throw badRequest(`Library ${id} has no pool record; nothing can erase its cartridges.`);
      const result = await runExclusiveOp(
        store,
        { kind: 'delete_library', executor: `node:${node}`, params: { library: id } },
        'Library delete',
        ctx.config.opTimeoutMs,
      );
      return DeleteLibraryResponse.parse(result);
    },
  );
}
