import type { Logger } from 'pino';
import { createHandlers } from './control/handlers.js';
import type { EmulatorConfig } from './control/protocol.js';
import { ControlServer } from './control/server.js';
import { DataPlane, type TransportStarter } from './dataplane.js';

export interface StartOptions {
  /** Starts the SCSI transport (iSCSI target) once the inventories are open. */
  transport?: TransportStarter;
  /** The operator-unload quiet window; default 15 s as the spec states. */
  unloadGuardMs?: number;
  now?: () => number;
}

export interface RunningEmulator {
  dataPlane: DataPlane;
  /** Syncs, closes the control socket and the transport. Idempotent. */
  stop(): Promise<void>;
  /** Settles once stopped, by stop() or by a `shutdown` request. */
  stopped: Promise<void>;
}

/**
 * Starts the data plane in this process: inventories, transport, then the control socket
 * (last, so a client that connects finds everything serving). Tests run it in-process.
 */
export async function startEmulator(
  config: EmulatorConfig,
  logger: Logger,
  opts: StartOptions = {},
): Promise<RunningEmulator> {
  const dataPlane = await DataPlane.open(config, logger, {
    unloadGuardMs: opts.unloadGuardMs,
    now: opts.now,
  });
  // Moves are rare and worth a line each; activity flips with every host command burst.
  dataPlane.bus.subscribe((event) =>
    event.kind === 'drive_activity'
      ? logger.debug({ event }, 'drive activity')
      : logger.info({ event }, 'emulator event'),
  );
  if (opts.transport) dataPlane.transport = await opts.transport(dataPlane);

  let stopping: Promise<void> | undefined;
  let markStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));
  let control: ControlServer | undefined;

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      logger.info('emulator stopping');
      // Each step runs even if the one before failed: the transport must sync its images.
      const failures: unknown[] = [];
      await control?.close().catch((err: unknown) => failures.push(err));
      await dataPlane.transport?.stop().catch((err: unknown) => failures.push(err));
      markStopped();
      logger.info('emulator stopped');
      if (failures.length > 0) throw failures[0];
    })();
    return stopping;
  };

  try {
    control = await ControlServer.listen({
      socketPath: config.socket,
      handlers: createHandlers(dataPlane, () => {
        stop().catch((err: unknown) => logger.error({ err }, 'emulator did not stop cleanly'));
      }),
      events: dataPlane.bus,
      logger: logger.child({ component: 'control' }),
    });
  } catch (err) {
    await dataPlane.transport?.stop();
    throw err;
  }
  logger.info(
    { socket: config.socket, libraries: config.libraries.map((l) => l.id), generation: config.generation },
    'emulator serving',
  );
  return { dataPlane, stop, stopped };
}
