import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { Health } from '@vtl/api';
import type { AppContext } from '../context.js';

/** How long /healthz waits for etcd at most: a health probe must answer fast even in a stall. */
const STORE_PROBE_MAX_MS = 2_000;

/**
 * GET /healthz: public, also on the plaintext listener. `ts` carries milliseconds. 200 with
 * ok: true while the store answers; 503 with ok: false and `down` naming what does not.
 */
export async function healthRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/healthz',
    {
      schema: { response: { 200: Health, 503: Health } },
      config: { role: 'public', doc: { summary: 'Health (§2.11)' } },
    },
    async (_request, reply) => {
      const storeUp = await ctx.store.ping(Math.min(ctx.store.deadlineMs, STORE_PROBE_MAX_MS));
      const down = storeUp ? [] : ['store'];
      const body = { ok: down.length === 0, ts: new Date().toISOString(), version: ctx.version };
      if (down.length === 0) return Health.parse(body);
      void reply.status(503).header('retry-after', '2');
      return Health.parse({ ...body, down });
    },
  );
}
