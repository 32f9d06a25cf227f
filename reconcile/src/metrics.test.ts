import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/store';
import { TerminalError, startController } from './controller.js';
import { serveMetrics } from './metrics.js';

/** The reconcile metrics, read over HTTP as Prometheus scrapes them. */
describe('reconcile metrics', () => {
  const log = pino({ level: 'silent' });
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  it('counts passes by controller and result, times them, and reports the queue depth', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) });
    let failures = 0;
    const c = startController<string>({
      name: 'metrics-test',
      logger,
      queue: { baseDelayMs: 10 },
      reconcile: async (key) => {
        if (key === 'flaky' && failures++ < 2) throw new Error('not yet');
        if (key === 'bad') throw new TerminalError('never');
        if (key === 'again') return { requeueAfterMs: 60_000 };
      },
    });
    stops.push(() => c.stop());
    for (const k of ['ok', 'flaky', 'bad', 'again']) c.queue.add(k);
    await waitFor(() => failures >= 3, { timeoutMs: 5_000 });

    const server = await serveMetrics('127.0.0.1:0', log);
    stops.push(() => server.close());
    const scrape = async () => (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    await waitFor(async () => (await scrape()).includes('result="terminal_error"'), { timeoutMs: 5_000 });
    const text = await scrape();
    const count = (result: string) =>
      Number(
        new RegExp(
          `controller_runtime_reconcile_total\\{controller="metrics-test",result="${result}"\\} (\\d+)`,
        ).exec(text)?.[1],
      );
    expect(count('success')).toBe(2); // ok, and flaky's third pass
    expect(count('error')).toBe(2);
    expect(count('terminal_error')).toBe(1);
    expect(count('requeue_after')).toBe(1);
    expect(text).toMatch(/controller_runtime_reconcile_errors_total\{controller="metrics-test"\} 3/);
    expect(text).toMatch(/controller_runtime_reconcile_time_seconds_count\{controller="metrics-test"\} 6/);
    expect(text).toMatch(/workqueue_depth\{name="metrics-test"\} 0/);
    // Every line of one pass carries the same reconcileID; each pass has its own.
    const ids = lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.key === 'flaky')
      .map((l) => l.reconcileID);
    expect(ids.length).toBe(3);
    expect(new Set(ids).size).toBe(3);

    expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
  });

  it('refuses an address that is not host:port', async () => {
    await expect(serveMetrics('localhost:http', log)).rejects.toThrow(/host:port/);
  });
});
