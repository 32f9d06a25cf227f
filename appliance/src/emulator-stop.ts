import path from 'node:path';
import type { Logger } from 'pino';
// The control client alone: the package index would load the whole emulator into the launcher.
import { EmulatorClient } from '@vtl/emulator/control-client';
import { stillRuns, identify, type ProcessIdentity } from '@vtl/reconcile/process-identity';
import { runningEmulator } from './leftovers.js';

const POLL_MS = 50;

/**
 * Stops the emulator of this state directory if it still runs once the nodeagent is gone. The
 * nodeagent stops it on a clean stop; this covers a nodeagent that could not (it was still
 * waiting for a stopped etcd, or hit its hard exit), and an emulator that no longer answers its
 * control socket but has not exited (one stuck while stopping was seen to stay for good), so
 * that stopping the appliance stops everything: what still runs at `limitMs` is killed.
 */
export async function stopEmulatorIfRunning(
  stateDir: string,
  logger: Logger,
  limitMs: number,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  const socket = path.join(stateDir, 'emulator', 'emulator.sock');
  const client = await EmulatorClient.connect(socket, {
    timeoutMs: 200,
    reconnect: false,
    callTimeoutMs: limitMs,
  }).catch(() => undefined);
  let who: ProcessIdentity | undefined;
  try {
    if (client) {
      const hello = await client.hello();
      who = await identify(hello.pid);
      logger.warn(
        { emulatorPid: hello.pid },
        'the emulator still runs after the nodeagent stopped; stopping it',
      );
      await client.shutdown().catch(() => undefined);
    } else {
      who = await runningEmulator(stateDir);
      if (who)
        logger.warn(
          { emulatorPid: who.pid },
          'the emulator does not answer but still runs; waiting for it to exit',
        );
    }
  } catch (err) {
    logger.warn({ err }, 'could not stop the emulator');
    who ??= await runningEmulator(stateDir);
  } finally {
    client?.close();
  }
  if (!who) return;
  while (Date.now() < deadline && (await stillRuns(who))) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  if (await stillRuns(who)) {
    logger.warn({ emulatorPid: who.pid }, 'the emulator did not exit in time; killing it');
    process.kill(who.pid, 'SIGKILL');
  }
}
