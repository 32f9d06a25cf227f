import { pino } from 'pino';
import { EventJournal, Store } from '@vtl/store';
import { boundedStep, exitOnRestartRequest, onShutdown, watchSupervisor } from '@vtl/reconcile';
import { buildApp, buildPlainApp } from './app.js';
import { loadConfig } from './config.js';
import { httpsOptions, loadCertificate } from './tls.js';
import { capConnectionsPerClient } from './connection-cap.js';
import { ensureIdentity } from './services/identity.js';
import { ensureInitialAdmin } from './services/users.js';
import { VERSION } from './version.js';
import { setCertificateExpiry } from './services/process-metrics.js';

/** Entry point: listens on HTTPS and, unless disabled, on the plaintext port. */
async function main() {
  const config = loadConfig();
  // VTL_LOG_LEVEL=debug adds a line per successful read (plugins/request-log.ts).
  const logger = pino({ name: 'apiserver', level: config.logLevel });
  // Before anything waits on the store: a launcher that died must not leave this process behind.
  watchSupervisor(logger);
  const store = await Store.connect({
    endpoints: config.etcdEndpoints,
    tls: config.etcdTls,
    sealingKeyFile: config.sealingKeyFile,
    logger,
    deadlineMs: config.storeDeadlineMs,
  });
  await ensureIdentity(store);
  await ensureInitialAdmin(store, config.stateDir, logger, config.initialAdminPasswordFile);
  const ctx = {
    store,
    journal: new EventJournal(store),
    config,
    logger,
    version: VERSION,
    startedAt: new Date(),
  };
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

  // Bounded steps: with etcd stopped or gone, closing the store must not hold the exit.
  onShutdown(logger, async () => {
    await boundedStep(logger, 'close listeners', () => Promise.allSettled([app.close(), plain?.close()]));
    await boundedStep(logger, 'close store', () => store.close());
  });
}

main().catch((err) => {
  console.error(
    JSON.stringify({
      level: 60,
      name: 'apiserver',
      msg: 'apiserver failed to start',
      err: String(err?.stack ?? err),
    }),
  );
  process.exit(1);
});
