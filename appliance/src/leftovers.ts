import type { Logger } from 'pino';
import { stillRuns } from '@vtl/reconcile/dist/process-identity.js';
import type { PidFiles, PidRecord } from './pid-files.js';

/** How long a leftover has to exit after SIGTERM before it is killed. */
const LEFTOVER_GRACE_MS = 10_000;
const POLL_MS = 100;

/**
 * Stops what a previous run of this state directory left running (its launcher was killed, so
 * nobody stopped them): the control-plane processes and etcd, each verified by pid file. They
 * normally exit by themselves within seconds of their launcher's death; this covers the rest.
 * The emulator is not among them: the new nodeagent adopts it, so host sessions survive.
 */
export async function stopLeftovers(pids: PidFiles, logger: Logger): Promise<PidRecord[]> {
  const leftovers = await pids.running();
  // etcd last: the others may still be writing their last records.
  for (const group of [
    leftovers.filter((l) => l.name !== 'etcd'),
    leftovers.filter((l) => l.name === 'etcd'),
  ]) {
    await Promise.all(group.map((l) => stopOne(l, logger)));
  }
  for (const l of leftovers) await pids.remove(l.name);
  return leftovers;
}

async function stopOne(leftover: PidRecord, logger: Logger): Promise<void> {
  logger.warn(
    { process: leftover.name, pid: leftover.pid },
    'a process of the previous run of this state directory still runs; stopping it',
  );
  signal(leftover.pid, 'SIGTERM');
  // A SIGSTOPped leftover never handles SIGTERM: let it go on so it can.
  signal(leftover.pid, 'SIGCONT');
  const deadline = Date.now() + LEFTOVER_GRACE_MS;
  while (Date.now() < deadline) {
    if (!(await stillRuns(leftover))) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  logger.warn({ process: leftover.name, pid: leftover.pid }, 'leftover ignored SIGTERM; killing it');
  signal(leftover.pid, 'SIGKILL');
  while (await stillRuns(leftover)) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
}

function signal(pid: number, sig: NodeJS.Signals) {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}
