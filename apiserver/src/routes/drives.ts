import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import { LoadRequest, LoadResponse, UnloadResponse, badRequest } from '@vtl/api';
import type { AppContext } from '../context.js';
import { idParam, indexParam } from '../plugins/validate.js';
import { findLibrary, nodeOfLibrary, requireLive, loadSnapshot } from '@vtl/domain';
import { runOp } from '../services/ops.js';
import { withLock } from '../services/lock.js';

type DriveParams = { Params: { lib: string; index: string } };

/** Load and unload (§4.6 rules 6 and 7); the nodeagent of the library's pool moves the media. */
export async function driveRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;

  async function target(params: DriveParams['Params']) {
    const s = await loadSnapshot(store);
    const lib = findLibrary(s, idParam(params.lib, 'library'));
    const index = indexParam(params.index, 'drive index');
    const live = requireLive(
      s,
      lib,
      `Library ${lib.id} is not live; apply it first (POST /api/libraries/apply).`,
    );
    const drive = live.drives.find((d) => d.index === index);
    if (!drive)
      throw badRequest(
        `Library ${lib.id} has drives 0 to ${live.drives.length - 1}; there is no drive ${index}.`,
      );
    return { lib, live, drive, executor: `node:${nodeOfLibrary(s, lib)}` };
  }

  /**
   * Loads and unloads of one library decide and run one at a time (a leased lock), on the
   * status as it is after the previous move: of N racing loads into one drive one succeeds and
   * the others get 400 "holds ... unload it first", instead of all reporting success.
   */
  const oneMoveAtATime = <T>(params: DriveParams['Params'], fn: () => Promise<T>) =>
    withLock(store, `drives-${idParam(params.lib, 'library')}`, fn);

  r.post(
    '/api/libraries/:lib/drives/:index/load',
    {
      schema: {
        params: z.object({ lib: z.string(), index: z.string() }),
        body: LoadRequest,
        response: { 200: LoadResponse },
      },
      config: {
        role: 'admin',
        action: 'drive.load',
        doc: { summary: 'Load a cartridge into a drive' },
      },
    },
    async (request) => {
      const { label } = request.body;
      const wanted = label.trim().toUpperCase();
      const result = await oneMoveAtATime(request.params, async () => {
        const { lib, live, drive, executor } = await target(request.params);
        if (drive.loaded) throw badRequest(`Drive ${drive.index} holds ${drive.loaded}; unload it first.`);
        if (!live.slots.some((s) => s.label === wanted))
          throw badRequest(
            `${wanted} is not in a slot of library ${lib.id}; GET /api/status shows its slots.`,
          );
        return runOp(
          store,
          { kind: 'load', executor, params: { library: lib.id, drive: drive.index, label: wanted } },
          ctx.config.opTimeoutMs,
        );
      });
      return LoadResponse.parse(result);
    },
  );

  r.post(
    '/api/libraries/:lib/drives/:index/unload',
    {
      schema: { params: z.object({ lib: z.string(), index: z.string() }), response: { 200: UnloadResponse } },
      config: {
        role: 'admin',
        action: 'drive.unload',
        doc: { summary: 'Return the loaded cartridge to its slot' },
      },
    },
    async (request) => {
      const result = await oneMoveAtATime(request.params, async () => {
        const { lib, drive, executor } = await target(request.params);
        if (!drive.loaded)
          throw badRequest(`Drive ${drive.index} of library ${lib.id} is empty; nothing to unload.`);
        return runOp(
          store,
          { kind: 'unload', executor, params: { library: lib.id, drive: drive.index } },
          ctx.config.opTimeoutMs,
        );
      });
      return UnloadResponse.parse(result);
    },
  );
}
