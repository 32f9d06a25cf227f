import Fastify, { type FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';
import { registerErrorHandler } from './plugins/errors.js';
import { healthRoutes } from './routes/health.js';
import { systemRoutes } from './routes/system.js';
import { poolRoutes } from './routes/pools.js';
import { libraryRoutes } from './routes/libraries.js';
import { cartridgeRoutes } from './routes/cartridges.js';
import { driveRoutes } from './routes/drives.js';
import { statusRoutes } from './routes/status.js';
import { eventRoutes } from './routes/events.js';
import { createMetrics, type Metrics } from './services/metrics.js';

/** Endpoint roles as §4 labels them; unlabelled reads are read-only, writes admin (docs/api.md). */
export type Role = 'public' | 'read-only' | 'admin';
declare module 'fastify' {
  interface FastifyContextConfig {
    role?: Role;
  }
}

async function metricsRoute(app: FastifyInstance, metrics: Metrics) {
  app.get('/metrics', { config: { role: 'public' } }, async (_request, reply) => {
    await metrics.refresh();
    reply.header('content-type', metrics.contentType);
    return metrics.metrics();
  });
}

/** The HTTPS application: every route of the control API. */
export async function buildApp(
  ctx: AppContext,
  opts: { https?: { key: string; cert: string } } = {},
): Promise<FastifyInstance> {
  // The pino instance is typed more narrowly than Fastify's logger; the cast only widens it.
  const app = Fastify({
    loggerInstance: ctx.logger,
    ...(opts.https ? { https: opts.https } : {}),
  }) as unknown as FastifyInstance;
  registerErrorHandler(app);
  const metrics = createMetrics(ctx.store) as Metrics;
  await healthRoutes(app, ctx);
  await metricsRoute(app, metrics);
  for (const routes of [
    systemRoutes,
    poolRoutes,
    libraryRoutes,
    cartridgeRoutes,
    driveRoutes,
    statusRoutes,
    eventRoutes,
  ])
    await routes(app, ctx);
  return app;
}

/** The optional plaintext listener: `/healthz` and `/metrics` only. */
export async function buildPlainApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: ctx.logger }) as unknown as FastifyInstance;
  registerErrorHandler(app);
  await healthRoutes(app, ctx);
  await metricsRoute(app, createMetrics(ctx.store) as Metrics);
  return app;
}
