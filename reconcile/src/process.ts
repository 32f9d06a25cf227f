import { pino, type Logger } from 'pino';
import { onShutdown, watchSupervisor, type StopReason } from './shutdown.js';

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
