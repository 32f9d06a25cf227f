import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import {
  ConfirmRequest,
  DrainState,
  MaintenanceAnswer,
  badRequest,
  NodeRecord,
  RestartBody,
  RestartResponse,
  keys,
} from '@vtl/api';
import { activeJobs, loadSnapshot, requestRestart, startDrain, submitOp } from '@vtl/domain';
import type { AppContext } from '../context.js';

/** §8: how long a graceful restart waits for jobs (the controller may end it sooner in tests). */
const DRAIN_LIMIT_MS = 30 * 60_000;

/** §4.2: control-plane restart and host reboot. */
export async function maintenanceRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;

  r.post(
    '/api/system/restart',
    {
      schema: { body: RestartBody, response: { 200: RestartResponse, 202: RestartResponse } },
      config: {
        role: 'admin',
        action: 'system.restart',
        doc: {
          summary: 'Restart the control plane (202 while a graceful restart waits for jobs)',
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      request.auditSubject = body.mode;
      const [snapshot, drain] = await Promise.all([loadSnapshot(store), store.get(keys.drain, DrainState)]);
      const active = activeJobs(snapshot).length;
      if (body.mode === 'graceful' && active > 0) {
        if (drain?.value.draining)
          throw badRequest(
            'A graceful restart is already draining; wait for it or restart in mode immediate.',
          );
        await startDrain(store, DRAIN_LIMIT_MS);
        reply.code(202);
        return RestartResponse.parse({
          ok: true,
          draining: true,
          active_jobs: active,
          detail: `Waiting for ${active} active jobs (up to 30 minutes); job-creating calls are refused meanwhile.`,
        });
      }
      await requestRestart(store, body.mode);
      return RestartResponse.parse({
        ok: true,
        detail:
          active > 0
            ? `Control plane restarting now; ${active} interrupted jobs become retryable.`
            : 'Control plane restarting; the data plane and host I/O are unaffected.',
      });
    },
  );

  r.post(
    '/api/system/reboot',
    {
      schema: { body: ConfirmRequest('reboot'), response: { 200: MaintenanceAnswer } },
      config: {
        role: 'admin',
        action: 'system.reboot',
        doc: { summary: 'Reboot every node' },
      },
    },
    async (request, reply) => {
      const nodes = (await store.list(keys.nodeStatus.prefix, NodeRecord)).items.map((i) => i.value.node);
      // The answer goes out first (§4.2): the ops are submitted once it is sent, and not awaited.
      reply.raw.once('close', () => {
        for (const node of nodes)
          void submitOp(store, {
            kind: 'reboot',
            executor: `node:${node}`,
            params: {},
            requestedBy: request.principal?.name,
          }).catch((err) => request.log.error({ err, node }, 'reboot not requested'));
      });
      return MaintenanceAnswer.parse({
        ok: true,
        detail: `Rebooting ${nodes.length} nodes; host sessions drop until boot restores them.`,
      });
    },
  );
}
