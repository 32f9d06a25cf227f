import type { Logger } from 'pino';

/**
 * Why a process stops: a signal (service manager, the launcher, Ctrl-C), or its supervisor died
 * (the launcher was killed: nobody will stop or restart this process any more).
 */
export type StopReason = 'signal' | 'supervisor-gone';

/**
 * A process exits this long after it was told to stop, whether or not its clean stop finished:
 * a stopped or vanished etcd must not hold it (the launcher and service managers allow 10 s).
 */
export const HARD_EXIT_MS = 7_000;

/** How long one stop step may take (see boundedStep). */
export const STEP_LIMIT_MS = 2_000;

let stopFn: ((reason: StopReason) => Promise<void>) | undefined;
let stopping: StopReason | undefined;
let log: Logger | undefined;
let watching = false;
let signalsInstalled = false;

/**
 * Makes the process exit when its supervisor dies. The launcher spawns its children with an IPC
 * channel; the kernel closes it when the launcher dies however it died (kill -9, OOM), and Node
 * then emits 'disconnect'. Node has no prctl(PR_SET_PDEATHSIG), and this needs no native code.
 * Without a channel (a service manager started the process) there is nothing to watch.
 * Call it first thing: a process still connecting to a vanished etcd must go too.
 */
export function watchSupervisor(logger: Logger): void {
  log ??= logger;
  if (watching || !process.channel) return;
  watching = true;
  // The channel must not keep the process alive, nor may a dead launcher's closed stdout crash a
  // clean stop: its output pipe goes with it.
  process.channel.unref();
  process.once('disconnect', () => {
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    requestStop('supervisor-gone', 'the supervisor is gone');
  });
}

/**
 * Installs the stop path: SIGTERM, SIGINT or the supervisor's death runs `stop` once, then the
 * process exits 0 (1 when stop threw). Whatever stop waits for, the process exits HARD_EXIT_MS
 * after the request; a second SIGTERM/SIGINT exits at once.
 */
export function onShutdown(logger: Logger, stop: (reason: StopReason) => Promise<void>): void {
  log = logger;
  stopFn = stop;
  watchSupervisor(logger);
  if (signalsInstalled) return;
  signalsInstalled = true;
  process.on('SIGTERM', () => requestStop('signal', 'SIGTERM'));
  process.on('SIGINT', () => requestStop('signal', 'SIGINT'));
}

function requestStop(reason: StopReason, what: string): void {
  if (stopping) {
    if (reason === 'signal') {
      log?.warn({ signal: what }, 'second stop request; exiting now');
      exit(1);
    }
    return;
  }
  stopping = reason;
  log?.info({ reason: what }, 'stopping');
  setTimeout(() => {
    log?.error({ afterMs: HARD_EXIT_MS }, 'clean stop did not finish in time; exiting anyway');
    exit(1);
  }, HARD_EXIT_MS);
  // Not started yet: nothing to clean up but what the exit releases anyway.
  if (!stopFn) exit(0);
  void runStop(reason);
}

async function runStop(reason: StopReason) {
  const stop = stopFn!;
  stopFn = undefined;
  try {
    await stop(reason);
    exit(0);
  } catch (err) {
    log?.error({ err }, 'did not stop cleanly');
    exit(1);
  }
}

/**
 * Exits. Once the supervisor is gone, so is the reader of stdout, and pino's exit-time flush
 * retries a write that fails with EPIPE forever (sonic-boom): process.exit() would hang. Nobody
 * waits for the exit status or the output any more, so the process ends itself with SIGKILL.
 */
function exit(code: number): never {
  if (stopping === 'supervisor-gone') process.kill(process.pid, 'SIGKILL');
  process.exit(code);
}

/**
 * Runs one step of a clean stop, giving up after `limitMs` (logged) so the steps after it still
 * run: closing a watch or revoking a lease must not wait for a store that does not answer.
 */
export async function boundedStep(
  logger: Logger,
  name: string,
  step: () => Promise<unknown> | unknown,
  limitMs = STEP_LIMIT_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), limitMs)));
  try {
    const outcome = await Promise.race([Promise.resolve().then(step), late]);
    if (outcome === 'late')
      logger.warn({ step: name, limitMs }, 'stop step did not finish in time; going on');
  } catch (err) {
    logger.warn({ err, step: name }, 'stop step failed; going on');
  } finally {
    clearTimeout(timer);
  }
}
