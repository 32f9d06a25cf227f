import type { ServerOptions } from 'node:https';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';
import './plugins/route-config.js';
import { registerErrorHandler } from './plugins/errors.js';
import { registerArrival } from './plugins/arrival.js';
import { hygieneOptions, registerHygiene } from './plugins/hygiene.js';
import { requestLogger } from './plugins/request-log.js';
import { registerAudit, registerAuth } from './plugins/auth.js';
import { healthRoutes } from './routes/health.js';
import { systemRoutes } from './routes/system.js';
import { maintenanceRoutes } from './routes/maintenance.js';
import { supportBundleRoutes } from './routes/support-bundle.js';
import { poolRoutes } from './routes/pools.js';
import { libraryRoutes } from './routes/libraries.js';
import { cartridgeRoutes } from './routes/cartridges.js';
import { driveRoutes } from './routes/drives.js';
import { statusRoutes } from './routes/status.js';
import { eventRoutes } from './routes/events.js';
import { eventStreamRoutes } from './routes/event-stream.js';
import { settingsRoutes } from './routes/settings.js';
import { licenseRoutes } from './routes/license.js';
import { authRoutes } from './routes/auth.js';
import { userRoutes } from './routes/users.js';
import { apiKeyRoutes } from './routes/apikeys.js';
import { auditRoutes } from './routes/audit.js';
import { openApiRoutes } from './routes/openapi.js';
import { consoleRoutes } from './plugins/console.js';
import { targetRoutes } from './routes/targets.js';
import { remoteRoutes } from './routes/remotes.js';
import { catalogRoutes } from './routes/catalog.js';
import { jobRoutes } from './routes/jobs.js';
import { cartridgeJobRoutes } from './routes/cartridge-jobs.js';
import { recoverRoutes } from './routes/recover.js';
import { throughputRoutes } from './routes/throughput.js';
import { createMetrics } from './services/metrics.js';
import { AuditLog } from './services/audit-log.js';
import { ViewCache } from './services/view-cache.js';

async function metricsRoute(app: FastifyInstance, ctx: AppContext) {
  const metrics = createMetrics(ctx.store);
  app.get(
    '/metrics',
    {
      config: {
        role: 'public',
        doc: { summary: 'Prometheus text format (§6.4)', produces: 'text/plain; version=0.0.4' },
      },
    },
    async (_request, reply) => {
      const text = await metrics.scrape();
      reply.header('content-type', metrics.contentType);
      return text;
    },
  );
}

/** What both listeners share: the error body, role enforcement and the audit log. */
function base(ctx: AppContext, opts: { https?: ServerOptions }): FastifyInstance {
  // The pino instance is typed more narrowly than Fastify's logger; the cast only widens it.
  const app = Fastify({
    loggerInstance: requestLogger(ctx.logger),
    ...(opts.https ? { https: opts.https } : {}),
    ...hygieneOptions(opts.https),
  }) as unknown as FastifyInstance;
  registerHygiene(app, opts.https);
  registerErrorHandler(app);
  registerArrival(app);
  registerAuth(app, ctx.store, ctx.views);
  registerAudit(app, new AuditLog(ctx.store));
  return app;
}

/** The HTTPS application: every route of the control API. */
export async function buildApp(
  ctx: AppContext,
  opts: { https?: ServerOptions } = {},
): Promise<FastifyInstance> {
  const started = ctx.views ? undefined : await ViewCache.start(ctx.store);
  if (started) ctx.views = started;
  const app = base(ctx, opts);
  if (started)
    app.addHook('onClose', async () => {
      ctx.views = undefined;
      await started.close();
    });
  await consoleRoutes(app); // the web console at /: not part of the API, so before the collector
  openApiRoutes(app, ctx); // first: it collects every route registered after it
  await healthRoutes(app, ctx);
  await metricsRoute(app, ctx);
  for (const routes of [
    authRoutes,
    userRoutes,
    apiKeyRoutes,
    systemRoutes,
    maintenanceRoutes,
    supportBundleRoutes,
    licenseRoutes,
    settingsRoutes,
    poolRoutes,
    libraryRoutes,
    cartridgeRoutes,
    cartridgeJobRoutes,
    remoteRoutes,
    catalogRoutes,
    jobRoutes,
    recoverRoutes,
    driveRoutes,
    statusRoutes,
    eventRoutes,
    eventStreamRoutes,
    targetRoutes,
    throughputRoutes,
  ])
    await routes(app, ctx);
  await auditRoutes(app, ctx, new AuditLog(ctx.store));
  return app;
}

/** The optional plaintext listener: `/healthz` and `/metrics` only. */
export async function buildPlainApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = base(ctx, {});
  await healthRoutes(app, ctx);
  await metricsRoute(app, ctx);
  return app;
}
