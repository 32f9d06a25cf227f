import type { Logger } from 'pino';
import { stopLeftovers } from './leftovers.js';
import { PidFiles } from './pid-files.js';
import { lockStateDir, runDir, StateDirInUseError, type StateLock } from './state-lock.js';

/** This run's hold on its state directory: the lock and the pid files of what it starts. */
export interface RunState {
  lock: StateLock;
  pids: PidFiles;
}

/**
 * Takes the state directory for this run: the exclusive lock (a second start fails at once with
 * what to do), then stops what a killed previous run left behind, found by its pid files and
 * in /proc (leftovers.ts).
 */
export async function takeStateDir(stateDir: string, logger: Logger): Promise<RunState> {
  let lock: StateLock;
  try {
    lock = await lockStateDir(stateDir);
  } catch (err) {
    if (err instanceof StateDirInUseError) {
      logger.fatal({ code: err.code, holder: err.holder.pid }, err.message);
      process.exit(2);
    }
    throw err;
  }
  const pids = new PidFiles(runDir(stateDir));
  const stopped = await stopLeftovers(pids, stateDir, logger);
  if (stopped.length > 0) {
    logger.warn(
      { stopped: stopped.map((s) => `${s.name} (pid ${s.pid})`) },
      'stopped what the previous run of this state directory left running',
    );
  }
  return { lock, pids };
}
