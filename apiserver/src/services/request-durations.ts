import type { Metric } from 'prom-client';

/** The seconds each bucket of http_request_duration_seconds ends at (`le`), ascending. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface DurationLabels {
  method: string;
  route: string;
  status_code: string;
}

/** One method, route and status: a count per bucket (not cumulative), their sum and count. */
export class DurationSeries {
  private readonly counts = new Float64Array(BUCKETS.length);
  private sum = 0;
  private count = 0;

  constructor(readonly labels: Readonly<DurationLabels>) {}

  observe(seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
    if (i < BUCKETS.length) this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }

  /** The series' samples in the exposition's order: buckets (cumulative), +Inf, sum, count. */
  samples(name: string): { metricName: string; labels: Record<string, string | number>; value: number }[] {
    const out = [];
    let cumulative = 0;
    for (let i = 0; i < BUCKETS.length; i++) {
      cumulative += this.counts[i]!;
      out.push({
        metricName: `${name}_bucket`,
        labels: { le: BUCKETS[i]!, ...this.labels },
        value: cumulative,
      });
    }
    out.push(
      { metricName: `${name}_bucket`, labels: { le: '+Inf', ...this.labels }, value: this.count },
      { metricName: `${name}_sum`, labels: { ...this.labels }, value: this.sum },
      { metricName: `${name}_count`, labels: { ...this.labels }, value: this.count },
    );
    return out;
  }
}

/**
 * http_request_duration_seconds by method, route template and status, as a metric of a
 * prom-client registry. prom-client's own Histogram hashes the label object into a string key on
 * every observe; measured in the apiserver under 15,000 polled views a second, that was some 5 µs
 * of a request's 45 µs of CPU (issue 13's small views). Here a series is looked up once
 * (`series()`, which the view fast path keeps per route) and an observation is a bucket search
 * and three additions; the exposition is prom-client's (the registry formats what `get()`
 * returns, samples in the same order, labels `le` first), which a test holds it to.
 */
export class RequestDurations {
  readonly name = 'http_request_duration_seconds';
  readonly help = 'Time to answer an HTTP request of the control API, by method, route template and status';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly byKey = new Map<string, DurationSeries>();

  /** The series of one method, route template and status (kept: the same one every time). */
  series(method: string, route: string, status: number): DurationSeries {
    const key = `${method} ${status} ${route}`;
    let series = this.byKey.get(key);
    if (!series) {
      series = new DurationSeries({ method, route, status_code: String(status) });
      this.byKey.set(key, series);
    }
    return series;
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    this.series(method, route, status).observe(seconds);
  }

  /** What a prom-client registry formats (Registry.getMetricsAsString and getMetricsAsJSON). */
  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.byKey.values()].flatMap((s) => s.samples(this.name)),
    };
  }

  /** Registry.resetMetrics: every series back to zero, kept (callers may hold them). */
  reset(): void {
    for (const series of this.byKey.values()) series.reset();
  }

  /**
   * As a prom-client Metric for Registry.registerMetric: its type names prom-client's own four
   * classes, though the registry reads only name, get(), reset() and aggregator.
   */
  asMetric(): Metric {
    return this as unknown as Metric;
  }
}
