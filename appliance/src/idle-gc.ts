/**
 * A full, memory-reducing garbage collection once a busy process has gone idle (issue 13: idle
 * RSS). V8 sizes its heap for the last burst (a loaded view, a mint of 400, 500 event streams)
 * and keeps it: its own memory reducer runs only when allocation slows enough during a
 * collection it was doing anyway, so an appliance idle after a burst held 30-80 MB of garbage
 * and empty pages per process. Every few seconds this looks at the event loop's utilisation;
 * after a busy spell followed by a quiet interval it collects once (a few tens of ms, when
 * nothing waits) and then stays quiet until the process is busy again. Loaded before the entry
 * script (`--import`, memory-tuning.ts) or imported by it; it keeps no process alive.
 */
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/** How often the event loop's utilisation is sampled. */
const CHECK_MS = 2_000;
/** An interval this busy (fraction of time in callbacks) counts as activity. */
const BUSY = 0.1;
/**
 * An interval at most this busy counts as idle: an idle process's timers (lease renewals,
 * status publishing) take a few per cent on a loaded machine, where each callback runs longer.
 */
const IDLE = 0.05;
/** Or this much heap growth since the last collection (a burst that was over within one interval). */
const GROWTH_BYTES = 8 * 2 ** 20;

type Gc = () => void;

/** V8's gc() without --expose-gc on the command line: the flag set at run time, read in a fresh context. */
function exposeGc(): Gc | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    return vm.runInNewContext('gc') as Gc;
  } catch {
    return undefined;
  }
}

export function startIdleGc(): void {
  const gc = exposeGc();
  if (!gc) return;
  let last = performance.eventLoopUtilization();
  let busySince = false;
  let heapAfterGc = process.memoryUsage().heapTotal;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const grown = process.memoryUsage().heapTotal - heapAfterGc > GROWTH_BYTES;
    if (utilization >= BUSY || grown) busySince = true;
    if (!busySince || utilization > IDLE) return;
    // A full collection; the pages it empties go back to the system. (Node 20's V8 takes an
    // options object here too, but { type: 'major' } collected nothing in a test: keep it plain.)
    gc();
    busySince = false;
    heapAfterGc = process.memoryUsage().heapTotal;
  }, CHECK_MS);
  timer.unref();
}

startIdleGc();
