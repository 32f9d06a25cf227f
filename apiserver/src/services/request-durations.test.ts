import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestDurations } from './request-durations.js';

/** The same observations through prom-client's own Histogram, for the exposition to match. */
function promClientText(observations: [string, string, number, number][]): Promise<string> {
  const registry = new Registry();
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request of the control API, by method, route template and status',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  for (const [method, route, status, seconds] of observations)
    histogram.observe({ method, route, status_code: String(status) }, seconds);
  return registry.metrics();
}

describe('http_request_duration_seconds', () => {
  // Values on bucket edges (le is inclusive), between them, past the last and at zero.
  const observations: [string, string, number, number][] = [
    ['GET', '/api/status', 200, 0.0004],
    ['GET', '/api/status', 200, 0.001],
    ['GET', '/api/status', 200, 0.0011],
    ['POST', '/api/libraries', 400, 0.03],
    ['GET', '/api/status', 200, 45],
    ['GET', '/api/libraries/:id', 404, 0],
    ['POST', '/api/libraries', 400, 2.5],
  ];

  it('is exposed exactly as prom-client exposes the same observations', async () => {
    const registry = new Registry();
    const durations = new RequestDurations();
    registry.registerMetric(durations.asMetric());
    const kept = durations.series('GET', '/api/status', 200);
    for (const [method, route, status, seconds] of observations)
      if (method === 'GET' && route === '/api/status' && status === 200) kept.observe(seconds);
      else durations.observe(method, route, status, seconds);
    expect(await registry.metrics()).toBe(await promClientText(observations));
  });

  it('merges into another registry and resets to zero with the series kept', async () => {
    const durations = new RequestDurations();
    const own = new Registry();
    own.registerMetric(durations.asMetric());
    const kept = durations.series('GET', '/api/targets', 200);
    kept.observe(0.002);
    const merged = await Registry.merge([own, new Registry()]).metrics();
    expect(merged).toContain(
      'http_request_duration_seconds_count{method="GET",route="/api/targets",status_code="200"} 1',
    );
    own.resetMetrics();
    kept.observe(0.5);
    const text = await own.metrics();
    expect(text).toContain(
      'http_request_duration_seconds_count{method="GET",route="/api/targets",status_code="200"} 1',
    );
    expect(text).toContain(
      'http_request_duration_seconds_sum{method="GET",route="/api/targets",status_code="200"} 0.5',
    );
  });

  it('leaves out a value that is not a number of seconds', async () => {
    const durations = new RequestDurations();
    durations.observe('GET', '/api/status', 200, Number.NaN);
    durations.observe('GET', '/api/status', 200, 0.01);
    const registry = new Registry();
    registry.registerMetric(durations.asMetric());
    expect(await registry.metrics()).toContain(
      'http_request_duration_seconds_count{method="GET",route="/api/status",status_code="200"} 1',
    );
  });
});
