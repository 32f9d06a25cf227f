import path from 'node:path';
import type { Logger } from 'pino';
// The control client alone: the package index would load the whole emulator into the launcher.
import { EmulatorClient } from '@vtl/emulator/dist/control/client.js';
import { stillRuns, identify } from '@vtl/reconcile/dist/process-identity.js';

const POLL_MS = 50;

/**
 * Stops the emulator of this state directory if it still runs once the nodeagent is gone. The
 * nodeagent stops it on a clean stop; this covers a nodeagent that could not (it was still
 * waiting for a stopped etcd, or hit its hard exit), so that stopping the appliance stops
 * everything. Gives up after `limitMs`.
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
  if (!client) return;
  try {
    const hello = await client.hello();
    const who = await identify(hello.pid);
    logger.warn({ pid: hello.pid }, 'the emulator still runs after the nodeagent stopped; stopping it');
    await client.shutdown().catch(() => undefined);
    while (who && Date.now() < deadline && (await stillRuns(who))) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    if (who && (await stillRuns(who))) process.kill(who.pid, 'SIGKILL');
  } catch (err) {
    logger.warn({ err }, 'could not stop the emulator');
  } finally {
    client.close();
  }
}
