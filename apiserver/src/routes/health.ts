import type { FastifyInstance } from 'fastify';
import { Health } from '@vtl/api';
import type { AppContext } from '../context.js';

/** GET /healthz: public, also on the plaintext listener. `ts` carries milliseconds. */
export async function healthRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get(
    '/healthz',
    { config: { role: 'public', doc: { summary: 'Health (§2.11)', response: Health } } },
    async () => Health.parse({ ok: true, ts: new Date().toISOString(), version: ctx.version }),
  );
}
