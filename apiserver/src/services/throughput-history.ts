import { EXECUTING_JOB_STATES, type Drive, type Job, type ThroughputHistory } from '@vtl/api';

export const SAMPLE_INTERVAL_MS = 5_000;
export const HISTORY_WINDOW_MS = 15 * 60_000;

type DriveSeries = ThroughputHistory['drives'][number];
type JobSeries = ThroughputHistory['jobs'][number];

/** What is sampled: every drive the nodes report, and the job rows. */
export interface Counters {
  drives: Drive[];
  jobs: Job[];
}

/**
 * The last minutes of the appliance's own counters (each drive's block counters, each moving
 * job's bytes done), sampled from the view cache, so the console's charts start with history
 * instead of empty. Kept in this apiserver's memory only: a restarted apiserver starts over,
 * which costs a chart its past minutes and nothing else.
 */
export class ThroughputSampler {
  private readonly drives = new Map<string, DriveSeries>();
  private readonly jobs = new Map<number, JobSeries>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly read: () => Counters,
    private readonly opts = { intervalMs: SAMPLE_INTERVAL_MS, windowMs: HISTORY_WINDOW_MS },
  ) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.opts.intervalMs);
    this.timer.unref();
    return this;
  }

  stop() {
    clearInterval(this.timer);
  }

  /** Takes one sample of every drive and moving job, and forgets what left the window. */
  sample(now = Date.now()) {
    const s = this.read();
    const seen = new Set<string>();
    for (const d of s.drives) {
      const key = `${d.library}/${d.index}/${d.serial}`;
      seen.add(key);
      let series = this.drives.get(key);
      if (!series) {
        series = { library: d.library, index: d.index, serial: d.serial, samples: [] };
        this.drives.set(key, series);
      }
      series.samples.push([now, d.blocks_written, d.blocks_read]);
    }
    for (const key of this.drives.keys()) if (!seen.has(key)) this.drives.delete(key);
    for (const j of s.jobs) {
      if (!EXECUTING_JOB_STATES.includes(j.state)) continue;
      let series = this.jobs.get(j.id);
      if (!series) {
        series = { id: j.id, samples: [] };
        this.jobs.set(j.id, series);
      }
      series.samples.push([now, j.bytes_done]);
    }
    const oldest = now - this.opts.windowMs;
    for (const series of this.drives.values()) dropBefore(series.samples, oldest);
    for (const [id, series] of this.jobs) {
      dropBefore(series.samples, oldest);
      if (series.samples.length === 0) this.jobs.delete(id);
    }
  }

  history(): ThroughputHistory {
    return {
      interval_sec: Math.round(this.opts.intervalMs / 1000),
      window_sec: Math.round(this.opts.windowMs / 1000),
      drives: [...this.drives.values()],
      jobs: [...this.jobs.values()],
    };
  }
}

function dropBefore(samples: [number, ...number[]][], oldest: number) {
  let n = 0;
  while (n < samples.length && samples[n]![0] < oldest) n++;
  if (n) samples.splice(0, n);
}
