import type { FastifyInstance } from 'fastify';
import { ApplyResponse, LibraryStatus, RecoverRequest, RecoverResponse, VtlError, keys } from '@vtl/api';
import type { AppContext } from '../context.js';
import { parse } from '../plugins/validate.js';
import { refuseWhileDraining } from '../services/guards.js';
import { runOp } from '../services/ops.js';
import {
  declareRecoveredLibrary,
  queueRecoveryImports,
  recoveryActivationFailed,
} from '../services/recover.js';

/** POST /api/libraries/recover (§3.1, §4.6 rule 5): a library rebuilt from a bucket. */
export async function recoverRoutes(app: FastifyInstance, ctx: AppContext) {
  const { store, journal } = ctx;
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
      const plan = await declareRecoveredLibrary(store, journal, body);
      const by = request.principal?.name ?? '';
      // Activation first: apply is refused while jobs are queued, so the imports come after it.
      let activation: unknown;
      try {
        const applied = await runOp<ApplyResponse>(
          store,
          { kind: 'apply', executor: 'controller', params: {} },
          ctx.config.opTimeoutMs,
        );
        plan.steps.push(...applied.steps);
        // An apply that ran to the end may still leave this library down (it says so in a step).
        const status = await store.get(keys.libraryStatus.one(plan.lib.id), LibraryStatus);
        if (status?.value.state !== 'active')
          activation = new VtlError('internal', 'the data plane does not serve it after the apply');
      } catch (err) {
        activation = err;
      }
      const importJobs = await queueRecoveryImports(store, journal, body, plan, by);
      if (activation) throw recoveryActivationFailed(activation, plan.lib, importJobs, plan.steps);
      reply.code(201);
      return RecoverResponse.parse({
        library: plan.lib.id,
        serial: plan.lib.serial,
        name: plan.lib.name,
        drive_serials: plan.lib.drive_serials,
        carts: plan.carts,
        import_jobs: importJobs,
        steps: plan.steps,
      });
    },
  );
}
