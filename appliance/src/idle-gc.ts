/**
 * A full, memory-reducing garbage collection once a busy process has gone idle (issue 13: idle
 * RSS). V8 sizes its heap for the last burst (a loaded view, a mint of 400, 500 event streams)
 * and keeps it: its own memory reducer runs only when allocation slows enough during a
 * collection it was doing anyway, so an appliance idle after a burst held 30-80 MB of garbage
 * and empty pages per process. Every few seconds this looks at the event loop's utilisation;
 * after a busy spell followed by QUIET_FOR_MS of quiet intervals it collects once (a few tens
 * of ms, when nothing waits) and then stays quiet until the process is busy again. Loaded
 * before the entry script (`--import`, memory-tuning.ts) or imported by it; it keeps no
 * process alive.
 */
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { trimMalloc } from './malloc-trim.js';

/** How often the event loop's utilisation is sampled. */
export const CHECK_MS = 2_000;
/** An interval this busy (fraction of time in callbacks) counts as activity. */
const BUSY = 0.1;
/**
 * An interval at most this busy counts as idle: an idle process's timers (lease renewals,
 * status publishing) take a few per cent on a loaded machine, where each callback runs longer.
 */
const IDLE = 0.05;
/** Or this much heap growth since the last collection (a burst that was over within one interval). */
const GROWTH_BYTES = 8 * 2 ** 20;
/**
 * A resident set grown this much since the last collection is collected in any interval at
 * most IDLE_WHEN_GROWN busy: a process that never gets under IDLE (a nodeagent publishing 16
 * libraries' status on a loaded machine) otherwise kept its high-water mark for good.
 * Resident, not heap: Node 26's V8 keeps the pages its own collections empty, so the heap
 * shrinks and the process does not. One collection per 32 MB of growth costs a few tens of ms.
 */
const LARGE_GROWTH_BYTES = 32 * 2 ** 20;
const IDLE_WHEN_GROWN = 0.25;

type Gc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => unknown;

/**
 * One full collection that also hands memory back. On Node 26 (V8 14) a plain gc() frees the
 * objects but keeps the emptied pages pooled and the young generation at its grown size: a
 * test process stayed at 207 MB after it, and went to 59 MB with the last-resort flavour (what
 * V8 does under memory pressure: shrinks new space, releases pooled pages). Node 20's V8 (11.3)
 * takes an options object but collected almost nothing with it in the same test; there a plain
 * gc() is what works, and its page unmapper returns the pages shortly after.
 */
export function collectAll(gc: Gc, v8Major = Number(process.versions.v8.split('.')[0])): void {
  if (v8Major >= 12) gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  else gc();
}

/** V8's gc() without --expose-gc on the command line: the flag set at run time, read in a fresh context. */
function exposeGc(): Gc | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    return vm.runInNewContext('gc') as Gc;
  } catch {
    return undefined;
  }
}

/** How long the event loop must stay quiet right before a collection. */
const CONFIRM_MS = 100;

/**
 * Runs `collect` after CONFIRM_MS if the event loop was at most `limit` busy over them. The
 * interval that looked quiet may have ended with the start of a burst (consoles polling, a
 * benchmark's load; a burst's first second also grows the resident set past
 * LARGE_GROWTH_BYTES): a collection then, 0.1-1 s of marking the whole heap several times,
 * held up its first requests (measured 2026-12-02 in the apiserver: 436 ms at the start of a
 * 5 s load of the 16-library status view).
 */
export function whenStillQuiet(limit: number, collect: () => void): void {
  const mark = performance.eventLoopUtilization();
  setTimeout(() => {
    if (performance.eventLoopUtilization(mark).utilization <= limit) collect();
  }, CONFIRM_MS).unref();
}

/**
 * How long a process must have stayed quiet before the idle collection runs, as V8's own memory
 * reducer waits 8 s. A memory-reducing collection does not retain the maps that only compiled
 * code refers to, so it deoptimises most of a process's hot code ("embedded weak objects
 * cleared"): measured 2026-12-03 in the apiserver, the next load re-optimised some 300 functions,
 * its first answers waited up to 100-150 ms and its first seconds cost 10-20 % more CPU per
 * answer (a 1 KB view: 44-48 µs against 40-42 warm). Collected after a 2 s quiet interval, a
 * process with bursts a few seconds apart (a benchmark's alternated loads, jobs of a backup
 * window) paid that after every one of them.
 */
export const QUIET_FOR_MS = 8_000;

/**
 * The decision of the idle collection, fed one reading per CHECK_MS: whether a busy spell since
 * the last collection has been followed by QUIET_FOR_MS of quiet intervals.
 */
export class IdleWatch {
  private busySpell = false;
  /** When the current run of quiet intervals began, if the last interval was quiet. */
  private quietSince: number | undefined;

  /**
   * One interval's reading, at `now` (ms): its event-loop utilisation, the heap's growth and
   * whether the resident set grew LARGE_GROWTH_BYTES, both since the last collection. Returns
   * the utilisation the loop must stay under right before collecting (whenStillQuiet), or
   * undefined: not now.
   */
  reading(now: number, utilization: number, heapGrowth: number, grownResident: boolean): number | undefined {
    if (utilization >= BUSY || heapGrowth > GROWTH_BYTES || grownResident) this.busySpell = true;
    const limit = utilization <= IDLE ? IDLE : grownResident ? IDLE_WHEN_GROWN : -1;
    if (limit < 0) {
      this.quietSince = undefined;
      return undefined;
    }
    this.quietSince ??= now - CHECK_MS;
    if (!this.busySpell || now - this.quietSince < QUIET_FOR_MS) return undefined;
    return limit;
  }

  /** A collection ran: the next needs a busy spell and a quiet one again. */
  collected(): void {
    this.busySpell = false;
    this.quietSince = undefined;
  }
}

export function startIdleGc(): void {
  const gc = exposeGc();
  if (!gc) return;
  const watch = new IdleWatch();
  let last = performance.eventLoopUtilization();
  let heapAfterGc = process.memoryUsage().heapTotal;
  let rssAfterGc = process.memoryUsage.rss();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const limit = watch.reading(
      performance.now(),
      utilization,
      process.memoryUsage().heapTotal - heapAfterGc,
      process.memoryUsage.rss() - rssAfterGc > LARGE_GROWTH_BYTES,
    );
    if (limit === undefined) return;
    whenStillQuiet(limit, () => {
      // A full collection; the pages it empties go back to the system, and so do the free pages
      // of the malloc arenas (the native memory the burst used: buffers, requests).
      collectAll(gc);
      trimMalloc();
      watch.collected();
      heapAfterGc = process.memoryUsage().heapTotal;
      rssAfterGc = process.memoryUsage.rss();
      // The next interval starts after the collection: counted in it, a collection of 0.2 s or
      // more (a 50 MB heap on a loaded machine) made that interval busy and so the process due
      // for another, every 4 s for as long as it stayed idle.
      last = performance.eventLoopUtilization();
    });
  }, CHECK_MS);
  timer.unref();
}

startIdleGc();
