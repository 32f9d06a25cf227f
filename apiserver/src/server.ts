import { boundedStep, exitOnRestartRequest, runStoreProcess } from '@vtl/reconcile';
import { buildApp, buildPlainApp } from './app.js';
import { loadConfig } from './config.js';
import { httpsOptions, loadCertificate } from './tls.js';
import { capConnectionsPerClient } from './connection-cap.js';
import { ensureIdentity } from './services/identity.js';
import { ensureInitialAdmin } from './services/users.js';
import { VERSION } from './version.js';
import { setCertificateExpiry } from './services/process-metrics.js';

/** Entry point: listens on HTTPS and, unless disabled, on the plaintext port. */
runStoreProcess({ name: 'apiserver', loadConfig }, async ({ config, logger, store, journal }) => {
  await ensureIdentity(store);
  await ensureInitialAdmin(store, config.stateDir, logger, config.initialAdminPasswordFile);
  const ctx = { store, journal, config, logger, version: VERSION, startedAt: new Date() };
  const pair = await loadCertificate(config, ['localhost', '127.0.0.1', config.bind]);
  setCertificateExpiry('https', pair.cert);
  const app = await buildApp(ctx, { https: httpsOptions(pair, config.tlsHandshakeTimeoutMs) });
  capConnectionsPerClient(app.server, config.maxConnectionsPerClient, logger);
  await app.listen({ host: config.bind, port: config.httpsPort });
  const plain = config.plainPort === 0 ? undefined : await buildPlainApp(ctx);
  await plain?.listen({ host: config.bind, port: config.plainPort });
  logger.info({ https: config.httpsPort, plain: config.plainPort || 'disabled' }, 'apiserver listening');
  // SIGTERM below lets the answer to POST /api/system/restart finish before the process exits.
  await exitOnRestartRequest(store, logger);

  // Bounded: a client polling over keep-alive must not hold the exit. runStoreProcess then
  // closes the store.
  return async () => {
    await boundedStep(logger, 'close listeners', () => Promise.allSettled([app.close(), plain?.close()]));
  };
});
