// Loaded with --import by sse-fanout.ts (SSE_TRACE_GC): every collection of 5 ms or more, with its wall-clock start, on stderr.
import { PerformanceObserver, performance } from 'node:perf_hooks';
import path from 'node:path';
const who = path.basename(path.dirname(path.dirname(process.argv[1] ?? '')));
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if (e.duration >= 5)
      process.stderr.write(
        `GCTRACE ${who} ${new Date(performance.timeOrigin + e.startTime).toISOString()} kind ${e.detail?.kind} ${e.duration.toFixed(1)} ms\n`,
      );
});
obs.observe({ entryTypes: ['gc'] });
