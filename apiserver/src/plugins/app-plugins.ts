import type { ServerOptions } from 'node:https';
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';
import { AuditLog } from '@vtl/store';
import { ViewCache } from '../services/view-cache.js';
import { registerArrival } from './arrival.js';
import { registerAudit, registerAuth } from './auth.js';
import { registerErrorHandler } from './errors.js';
import { registerHygiene } from './hygiene.js';
import { registerZodCompilers } from './zod-provider.js';
import { registerViewFastPath } from './view-fast-path.js';

/**
 * The apiserver's cross-cutting services as named plugins (fastify-plugin: not encapsulated, so
 * their hooks and handlers apply to every route). Each names what it needs: Fastify refuses to
 * start when a dependency is missing or registered after it, so the order that matters (errors
 * before auth, auth before audit, the view cache before auth reads it) is checked, not assumed.
 */

/** Security headers, strict JSON bodies and the URL length limit. */
export const hygienePlugin = fp<{ https?: ServerOptions }>(
  async (app, opts) => registerHygiene(app, opts.https),
  {
    name: 'vtl-hygiene',
    fastify: '5.x',
  },
);

/** The zod schemas as Fastify's validators and serializers (zod-provider.ts). */
export const zodPlugin = fp(async (app) => registerZodCompilers(app), { name: 'vtl-zod', fastify: '5.x' });

/** The one error body; a zod failure of the validators becomes the documented 400. */
export const errorsPlugin = fp(async (app) => registerErrorHandler(app), {
  name: 'vtl-errors',
  fastify: '5.x',
  dependencies: ['vtl-zod'],
});

/** Arrival time of each request (Date-based answers are never earlier than the request). */
export const arrivalPlugin = fp(async (app) => registerArrival(app), { name: 'vtl-arrival', fastify: '5.x' });

/**
 * The read views' watch cache: started unless the context brings one, closed with the app; and
 * the fast path that answers the cached views from it (view-fast-path.ts).
 */
export const viewsPlugin = fp<{ ctx: AppContext; https: boolean }>(
  async (app, { ctx, https }) => {
    registerViewFastPath(app, () => ctx.views, https);
    if (ctx.views) return;
    const started = await ViewCache.start(ctx.store);
    ctx.views = started;
    app.addHook('onClose', async () => {
      ctx.views = undefined;
      await started.close();
    });
  },
  { name: 'vtl-views', fastify: '5.x' },
);

/** Role enforcement (§5) before the body is read. */
export const authPlugin = fp<{ ctx: AppContext }>(
  async (app, { ctx }) => registerAuth(app, ctx.store, ctx.views),
  {
    name: 'vtl-auth',
    fastify: '5.x',
    dependencies: ['vtl-errors'],
  },
);

/** The audit log of writes (and of the reads that hand out something sensitive). */
export const auditPlugin = fp<{ ctx: AppContext }>(
  async (app, { ctx }) => registerAudit(app, new AuditLog(ctx.store)),
  { name: 'vtl-audit', fastify: '5.x', dependencies: ['vtl-auth'] },
);
