import type { ServerOptions } from 'node:https';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';
import './plugins/route-config.js';
import { hygieneOptions } from './plugins/hygiene.js';
import {
  arrivalPlugin,
  auditPlugin,
  authPlugin,
  errorsPlugin,
  hygienePlugin,
  viewsPlugin,
  zodPlugin,
} from './plugins/app-plugins.js';
import { registerRequestLog, requestIdOptions, requestLogger } from './plugins/request-log.js';
import { healthRoutes } from './routes/health.js';
import { systemRoutes } from './routes/system.js';
import { maintenanceRoutes } from './routes/maintenance.js';
import { supportBundleRoutes } from './routes/support-bundle.js';
import { poolRoutes } from './routes/pools.js';
import { storageRoutes } from './routes/storage.js';
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
import { systemUpdateRoutes } from './routes/system-update.js';
import { throughputRoutes } from './routes/throughput.js';
import { gitopsRoutes } from './routes/gitops.js';
import { createMetrics } from './services/metrics.js';
import { setBuildInfo } from './services/process-metrics.js';
import { AuditLog } from '@vtl/store';

async function metricsRoute(app: FastifyInstance, ctx: AppContext) {
  const metrics = createMetrics(ctx.store);
  setBuildInfo(ctx.version);
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
async function base(
  ctx: AppContext,
  opts: { https?: ServerOptions; views?: boolean },
): Promise<FastifyInstance> {
  // The pino instance is typed more narrowly than Fastify's logger; the cast only widens it.
  const app = Fastify({
    loggerInstance: requestLogger(ctx.logger),
    // registerRequestLog: one line per request instead of two.
    logController: new LogController({ disableRequestLogging: true }),
    ...requestIdOptions(),
    ...(opts.https ? { https: opts.https } : {}),
    ...hygieneOptions(opts.https),
  }) as unknown as FastifyInstance;
  await app.register(hygienePlugin, { https: opts.https });
  registerRequestLog(app);
  await app.register(zodPlugin);
  await app.register(errorsPlugin);
  await app.register(arrivalPlugin);
  if (opts.views) await app.register(viewsPlugin, { ctx, https: !!opts.https });
  await app.register(authPlugin, { ctx });
  await app.register(auditPlugin, { ctx });
  return app;
}

/** The HTTPS application: every route of the control API. */
export async function buildApp(
  ctx: AppContext,
  opts: { https?: ServerOptions } = {},
): Promise<FastifyInstance> {
  const app = await base(ctx, { ...opts, views: true });
  await consoleRoutes(app, ctx.config.consoleDir); // the web console at /: not part of the API, so before the collector
  openApiRoutes(app, ctx); // first: it collects every route registered after it
  await healthRoutes(app, ctx);
  await metricsRoute(app, ctx);
  for (const routes of [
    authRoutes,
    userRoutes,
    apiKeyRoutes,
    systemRoutes,
    maintenanceRoutes,
    systemUpdateRoutes,
    supportBundleRoutes,
    licenseRoutes,
    settingsRoutes,
    poolRoutes,
    storageRoutes,
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
    gitopsRoutes,
  ])
    await routes(app, ctx);
  await auditRoutes(app, ctx, new AuditLog(ctx.store));
  return app;
}

/** The optional plaintext listener: `/healthz` and `/metrics` only. */
export async function buildPlainApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = await base(ctx, {});
  await healthRoutes(app, ctx);
  await metricsRoute(app, ctx);
  return app;
}
