import type { FastifyInstance } from 'fastify';
import { RecoverRequest, RecoverResponse } from '@vtl/api';
import type { AppContext } from '../context.js';
import { validInput } from '../plugins/validate.js';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { refuseWhileDraining } from '../services/guards.js';
import { recoverLibrary } from '../services/recover.js';

/** POST /api/libraries/recover (§3.1, §4.6 rule 5): a library rebuilt from a bucket. */
export async function recoverRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;
  r.post(
    '/api/libraries/recover',
    {
      // Validated where the handler says: a draining appliance refuses before the body is read.
      attachValidation: true,
      schema: { body: RecoverRequest, response: { 201: RecoverResponse } },
      config: {
        role: 'admin',
        action: 'library.recover',
        doc: { summary: 'Recover a library from a bucket', status: 201 },
      },
    },
    async (request, reply) => {
      await refuseWhileDraining(store, 'Recover');
      validInput(request);
      const body = request.body;
      request.auditSubject = `${body.system_name}/${body.library_serial}`;
      // The controller runs the recovery as an op (controller/src/ops/recover.ts); a failed
      // activation comes back as its 500 carrying the library, the import jobs and the steps.
      const recovered = await recoverLibrary(store, body, {
        requestedBy: request.principal?.name ?? '',
        opTimeoutMs: ctx.config.opTimeoutMs,
        remoteDeadlineMs: ctx.config.remoteDeadlineMs,
      });
      reply.code(201);
      return recovered;
    },
  );
}
