import { pino, type Logger } from 'pino';
import { EventJournal, Store, type StoreSettings } from '@vtl/store';
import { serveHealth, type HealthSettings } from './health-server.js';
import { serveMetrics } from './metrics.js';
import { boundedStep, onShutdown, watchSupervisor, type StopReason } from './shutdown.js';

/**
 * Runs a process's main function: `main` starts everything and returns how to stop it. SIGTERM,
 * SIGINT or the death of the launcher stop it once (bounded: see onShutdown), then the process
 * exits 0; a failure to start is logged and exits 1.
 */
export function runProcess(
  name: string,
  main: (logger: Logger) => Promise<(reason: StopReason) => Promise<void>>,
): void {
  const logger = pino({ name });
  watchSupervisor(logger);
  main(logger).then(
    (stop) => onShutdown(logger, stop),
    (err) => {
      logger.fatal({ err }, `${name} failed to start`);
      process.exit(1);
    },
  );
}

/**
 * The part of a control-plane process's configuration runStoreProcess starts from: each
 * process's loadConfig returns these fields beside its own.
 */
export interface StoreProcessConfig {
  /** etcd: storeSettingsFromEnv. */
  store: StoreSettings;
  /** The probes (serveHealth); none for a process that serves HTTP itself. */
  health?: HealthSettings;
  /** The Prometheus endpoint (serveMetrics); empty or absent: none. */
  metricsAddr?: string;
  /** pino's level; info unless set. */
  logLevel?: string;
}

/** Which control-plane process runStoreProcess starts, and from what configuration. */
export interface StoreProcessSpec<C extends StoreProcessConfig> {
  name: string;
  loadConfig: () => C;
  /** Fields every log line carries (the nodeagent's node). */
  logBindings?: (config: C) => Record<string, unknown>;
}

/** What runStoreProcess hands the process's own start. */
export interface StoreProcess<C> {
  config: C;
  logger: Logger;
  store: Store;
  journal: EventJournal;
}

/** How long the shared closing steps (metrics, held events, store) may take together. */
const CLOSE_BUDGET_MS = 1_000;

/**
 * runProcess for a control-plane process (apiserver, controller, nodeagent): loads its config,
 * connects the store, serves the probes if configured and makes the event journal; then `main`
 * starts the process's own parts and returns how to stop them; then the metrics endpoint, if
 * configured, is served. A stop runs the process's own first, then, in one shared budget of
 * CLOSE_BUDGET_MS (each step bounded, so a store that does not answer never holds the exit),
 * closes the metrics endpoint, records the events the journal still holds and closes the store.
 * Exit codes and signals as runProcess.
 */
export function runStoreProcess<C extends StoreProcessConfig>(
  spec: StoreProcessSpec<C>,
  main: (proc: StoreProcess<C>) => Promise<(reason: StopReason) => Promise<void>>,
): void {
  runProcess(spec.name, async (rootLogger) => {
    const config = spec.loadConfig();
    if (config.logLevel) rootLogger.level = config.logLevel;
    const logger = spec.logBindings ? rootLogger.child(spec.logBindings(config)) : rootLogger;
    const store = await Store.connect({ ...config.store, logger });
    if (config.health) await serveHealth(store, logger, config.health); // the chart's probes
    const journal = new EventJournal(store);
    const stop = await main({ config, logger, store, journal });
    // Once started: a nodeagent waiting for its node's claim must not take the running one's port.
    let metrics: Awaited<ReturnType<typeof serveMetrics>> | undefined;
    try {
      metrics = config.metricsAddr ? await serveMetrics(config.metricsAddr, logger) : undefined;
    } catch (err) {
      await stop('signal'); // what started is stopped before the failed start exits
      throw err;
    }
    return async (reason) => {
      await stop(reason);
      const until = Date.now() + CLOSE_BUDGET_MS;
      const step = (what: string, fn: () => unknown) =>
        boundedStep(logger, what, fn, Math.max(100, until - Date.now()));
      if (metrics) await step('close metrics', () => metrics.close());
      await step('record held events', () => journal.recorded());
      await step('close store', () => store.close());
    };
  });
}
