import { pino, type Logger } from 'pino';

/**
 * Runs a process's main function: `main` starts everything and returns how to stop it. SIGTERM
 * and SIGINT stop it once, then the process exits 0; a failure to start is logged and exits 1.
 */
export function runProcess(name: string, main: (logger: Logger) => Promise<() => Promise<void>>): void {
  const logger = pino({ name });
  let stopping = false;
  main(logger).then(
    (stop) => {
      const onSignal = (signal: NodeJS.Signals) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, `${name} stopping`);
        stop().then(
          () => process.exit(0),
          (err) => {
            logger.error({ err }, `${name} did not stop cleanly`);
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    },
    (err) => {
      logger.fatal({ err }, `${name} failed to start`);
      process.exit(1);
    },
  );
}
