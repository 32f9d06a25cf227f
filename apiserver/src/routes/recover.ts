import type { FastifyInstance } from 'fastify';
import { RecoverRequest, RecoverResponse } from '@vtl/api';
import type { AppContext } from '../context.js';
import { parse } from '../plugins/validate.js';
import { refuseWhileDraining } from '../services/guards.js';
import { recoverLibrary } from '../services/recover.js';

/** POST /api/libraries/recover (§3.1, §4.6 rule 5): a library rebuilt from a bucket. */
export async function recoverRoutes(app: FastifyInstance, ctx: AppContext) {
  const { store } = ctx;
  app.post(
    '/api/libraries/recover',
    {
      config: {
        role: 'admin',
        action: 'library.recover',
        doc: {
          summary: 'Recover a library from a bucket',
          body: RecoverRequest,
          response: RecoverResponse,
          status: 201,
        },
      },
    },
    async (request, reply) => {
      await refuseWhileDraining(store, 'Recover');
      const body = parse(RecoverRequest, request.body);
      request.auditSubject = `${body.system_name}/${body.library_serial}`;
      // The controller runs the recovery as an op (controller/src/ops/recover.ts); a failed
      // activation comes back as its 500 carrying the library, the import jobs and the steps.
      const recovered = await recoverLibrary(store, body, {
        requestedBy: request.principal?.name ?? '',
        opTimeoutMs: ctx.config.opTimeoutMs,
        remoteDeadlineMs: ctx.config.remoteDeadlineMs,
      });
      reply.code(201);
      return RecoverResponse.parse(recovered);
    },
  );
}
