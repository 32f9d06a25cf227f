import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
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
  randomDriveSerial,
  randomSerial,
  type LibrarySpec,
} from '@vtl/api';
import type { AppContext } from '../context.js';
import { idParam, validInput } from '../plugins/validate.js';
import {
  declareLibrary,
  findLibrary,
  libraryState,
  nodeOfLibrary,
  refuseWithLoadedDrives,
  requireFreeActivePool,
  type Snapshot,
  loadSnapshot,
} from '@vtl/domain';
import { nextLabels, usedVolsers } from '../services/labels.js';
import { libraryLifecycle } from '../services/library-lifecycle.js';
import { refuseWhileDraining } from '../services/guards.js';
import { runExclusiveOp } from '../services/exclusive-ops.js';
import { viewsOf } from '../services/views.js';
import { asBytes } from '../services/status-body.js';
import { cachedViewHandler } from '../plugins/view-fast-path.js';
import { libraryStatusRoutes } from './library-status.js';

const DEFAULT_SLOTS = 100;
const DEFAULT_IE = 4;

const row = (s: Snapshot, l: LibrarySpec) =>
  LibraryRow.parse({ ...l, state: libraryState(s, l.id), ...libraryLifecycle(s, l.id) });
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
  const pool = requireFreeActivePool(s, body.pool_id);

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
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store, journal } = ctx;
  await libraryStatusRoutes(app, ctx);

  r.get(
    '/api/libraries',
    {
      // Answered from the view cache's bytes, serialized through this schema when they were built.
      config: {
        role: 'read-only',
        doc: { summary: 'Library rows (§2.14)', response: z.array(LibraryRow) },
        view: (views) =>
          asBytes(views, 'library-rows', () => {
            const s = views.snapshot();
            return JSON.stringify(s.libraries.filter((l) => !l.deleting).map((l) => row(s, l)));
          }),
      },
    },
    cachedViewHandler(() => viewsOf(ctx)),
  );

  r.post(
    '/api/libraries',
    {
      schema: { body: DeclareLibraryRequest, response: { 201: DeclareLibraryResponse } },
      config: {
        role: 'admin',
        action: 'library.create',
        doc: {
          summary: 'Declare a library',

          status: 201,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const s = await loadSnapshot(store);
      const lib = await declareLibrary(store, (id) => planLibrary(s, body, id));
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

  r.get(
    '/api/libraries/:lib/next-label',
    {
      schema: { params: z.object({ lib: z.string() }), response: { 200: NextLabelResponse } },
      config: {
        role: 'read-only',
        doc: { summary: 'The label a mint would generate next' },
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

  r.post(
    '/api/libraries/apply',
    {
      schema: { body: ConfirmRequest('apply'), response: { 200: ApplyResponse } },
      config: {
        role: 'admin',
        action: 'library.apply',
        doc: {
          summary: 'Activate declared libraries',
        },
      },
    },
    async () => {
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

  r.post(
    '/api/system/dataplane-restart',
    {
      schema: { body: ConfirmRequest('restart'), response: { 200: ApplyResponse } },
      config: {
        role: 'admin',
        action: 'system.dataplane_restart',
        doc: { summary: 'Restart the data plane' },
      },
    },
    async () => {
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

  r.delete(
    '/api/libraries/:lib',
    {
      // Validated where the handler says: its own refusals come first, as they always did.
      attachValidation: true,
      schema: {
        params: z.object({ lib: z.string() }),
        body: DeleteLibraryRequest,
        response: { 200: DeleteLibraryResponse },
      },
      config: {
        role: 'admin',
        action: 'library.delete',
        doc: { summary: 'Delete a library' },
      },
    },
    async (request) => {
      const id = idParam(request.params.lib, 'library');
      const s = await loadSnapshot(store);
      const lib = findLibrary(s, id);
      validInput(request);
      const body = request.body;
      if (body.confirm !== lib.name && body.confirm !== lib.serial)
        throw badRequest(`confirm must be the library name "${lib.name}" or its serial exactly.`);
      await refuseWhileDraining(store, 'Library delete');
      if (!nodeOfLibrary(s, lib))
        throw badRequest(`Library ${id} has no pool record; nothing can erase its cartridges.`);
      const result = await runExclusiveOp(
        store,
        { kind: 'delete_library', executor: 'controller', params: { library: id } },
        'Library delete',
        ctx.config.opTimeoutMs,
      );
      return DeleteLibraryResponse.parse(result);
    },
  );
}
