import { RestartRequest, keys } from '@vtl/api';
import type { Informer, Store } from '@vtl/store';
import type { Logger } from 'pino';

/** How long the clean stop may take before the process exits anyway. */
const FORCE_EXIT_MS = 3_000;

/**
 * POST /api/system/restart writes keys.restartRequest; every control-plane process watches it
 * and, on a request newer than the one it saw at start, stops through its own SIGTERM path
 * (clean shutdown, exit 0). The launcher (or Kubernetes) starts it again about a second later,
 * and the new process takes the same request as already served.
 */
export async function exitOnRestartRequest(
  store: Store,
  logger: Logger,
  beforeExit: (request: RestartRequest) => void = () => undefined,
): Promise<Informer<RestartRequest>> {
  const seen = (await store.get(keys.restartRequest, RestartRequest))?.value.id;
  let fired = false;
  const check = (request: RestartRequest) => {
    if (fired || request.id === seen) return;
    fired = true;
    logger.info({ request }, 'control-plane restart requested; exiting to be restarted');
    beforeExit(request);
    process.kill(process.pid, 'SIGTERM');
    // A client polling over keep-alive can hold the HTTP server's close open indefinitely.
    setTimeout(() => process.exit(0), FORCE_EXIT_MS).unref();
  };
  return store.informer(keys.restartRequest, RestartRequest, {
    onSync: (items) => items.forEach((i) => check(i.value)),
    onPut: (i) => check(i.value),
    onDelete: () => undefined,
  });
}
