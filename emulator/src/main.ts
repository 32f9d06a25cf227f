import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadEmulatorEnv, readEmulatorConfig } from './config.js';
import { startEmulator } from './emulator.js';
import { iscsiTransport } from './transport/iscsi-transport.js';

/**
 * `node emulator/dist/main.js --config <file.json>`: the per-node data-plane process. It
 * outlives nodeagent restarts (the nodeagent reconnects to the control socket) and exits 0
 * on SIGTERM/SIGINT or a `shutdown` request after syncing and closing everything.
 *
 * VTL_UNLOAD_GUARD_MS overrides the 15 s operator-unload quiet window (tests).
 * VTL_TCMU_LISTEN (`IPV4:PORT` or a unix socket path) serves the LIO TCMU backstores' handler
 * front end (Fibre Channel hosts, docs/fc.md); unset: no FC data path.
 */
async function main(): Promise<void> {
  const logger = pino({ name: 'emulator' });
  const { values } = parseArgs({ options: { config: { type: 'string' } } });
  if (!values.config) {
    logger.fatal('usage: main.js --config <emulator-config.json>');
    process.exit(2);
  }
  let unloadGuardMs: number | undefined;
  let tcmuListen: string | undefined;
  try {
    ({ unloadGuardMs, tcmuListen } = loadEmulatorEnv());
  } catch (err) {
    logger.fatal({ err }, (err as Error).message);
    process.exit(2);
  }

  const config = await readEmulatorConfig(values.config);
  const emulator = await startEmulator(config, logger, {
    unloadGuardMs,
    transport: iscsiTransport(logger, { tcmuListen }),
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      logger.info({ signal }, 'signal received');
      emulator.stop().catch((err: unknown) => logger.error({ err }, 'emulator did not stop cleanly'));
    });
  }
  await emulator.stopped;
  // pino writes to stdout synchronously by default, so nothing is lost by exiting here.
  process.exit(0);
}

main().catch((err: unknown) => {
  pino().fatal({ err }, 'emulator failed to start');
  process.exit(1);
});
