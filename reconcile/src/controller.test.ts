import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startController, TerminalError, type ReconcileResult } from './controller.js';
import { waitFor } from './wait.js';

/** A logger whose JSON lines a test can read. */
function captureLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

describe('startController', () => {
  it('done: reconciles once per add, with a per-pass logger bound to controller and key', async () => {
    const { logger, lines } = captureLogger();
    const calls: string[] = [];
    const c = startController<string>({
      name: 'things',
      logger,
      reconcile: async (key, { log }) => {
        calls.push(key);
        log.info('working');
      },
    });
    c.queue.add('k1');
    await waitFor(() => calls.length === 1);
    c.queue.add('k1');
    await waitFor(() => calls.length === 2);
    await c.stop();
    expect(calls).toEqual(['k1', 'k1']);
    expect(lines.find((l) => l.msg === 'working')).toMatchObject({ controller: 'things', key: 'k1' });
  });

  it('requeue: runs the key again after the asked delay', async () => {
    const { logger } = captureLogger();
    const times: number[] = [];
    const c = startController<string>({
      name: 'poller',
      logger,
      reconcile: async (): Promise<ReconcileResult> => {
        times.push(Date.now());
        return times.length < 3 ? { requeueAfterMs: 50 } : undefined;
      },
    });
    c.queue.add('k');
    await waitFor(() => times.length === 3);
    await c.stop();
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(45);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(45);
  });

  it('error: retries with growing backoff until it succeeds, then resets the backoff', async () => {
    const { logger, lines } = captureLogger();
    const times: number[] = [];
    const c = startController<string>({
      name: 'flaky',
      logger,
      queue: { baseDelayMs: 40 },
      reconcile: async () => {
        times.push(Date.now());
        if (times.length <= 3) throw new Error(`boom ${times.length}`);
      },
    });
    c.queue.add('k');
    await waitFor(() => times.length === 4);
    expect(c.queue.retries('k')).toBe(0);
    await c.stop();
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(35);
    expect(gaps[1]).toBeGreaterThanOrEqual(75);
    expect(gaps[2]).toBeGreaterThanOrEqual(155);
    const failures = lines.filter((l) => l.msg === 'reconcile failed; will retry');
    expect(failures.map((l) => l.retryInMs)).toEqual([40, 80, 160]);
    expect(failures[0]).toMatchObject({ controller: 'flaky', key: 'k', err: { message: 'boom 1' } });
  });

  it('TerminalError: logged and not retried', async () => {
    const { logger, lines } = captureLogger();
    let calls = 0;
    const c = startController<string>({
      name: 'strict',
      logger,
      queue: { baseDelayMs: 1 },
      reconcile: async (key) => {
        calls++;
        if (key === 'bad') throw new TerminalError('spec is invalid');
      },
    });
    c.queue.add('bad');
    await waitFor(() => lines.some((l) => l.msg === 'reconcile failed terminally; not retrying'));
    // A later key is processed after it, so the terminal one had every chance to be retried first.
    c.queue.add('good');
    await waitFor(() => calls === 2);
    await c.stop();
    expect(calls).toBe(2);
    expect(c.queue.retries('bad')).toBe(0);
  });

  it('several workers run different keys in parallel but never one key twice at once', async () => {
    const { logger } = captureLogger();
    const running = new Set<string>();
    let maxParallel = 0;
    let overlap = false;
    let passes = 0;
    const release: (() => void)[] = [];
    const c = startController<string>({
      name: 'parallel',
      logger,
      workers: 3,
      reconcile: async (key) => {
        if (running.has(key)) overlap = true;
        running.add(key);
        maxParallel = Math.max(maxParallel, running.size);
        await new Promise<void>((resolve) => release.push(resolve));
        running.delete(key);
        passes++;
      },
    });
    c.queue.add('a');
    c.queue.add('b');
    c.queue.add('c');
    await waitFor(() => release.length === 3);
    c.queue.add('a'); // while 'a' runs: must wait for it
    expect(release.length).toBe(3);
    release.splice(0).forEach((r) => r());
    await waitFor(() => release.length === 1);
    release.splice(0).forEach((r) => r());
    await waitFor(() => passes === 4);
    await c.stop();
    expect(maxParallel).toBe(3);
    expect(overlap).toBe(false);
  });

  it('stop() waits for in-flight reconciles and starts no new ones', async () => {
    const { logger } = captureLogger();
    let finished = 0;
    let started = 0;
    let release!: () => void;
    const c = startController<string>({
      name: 'stopper',
      logger,
      reconcile: async () => {
        started++;
        await new Promise<void>((resolve) => (release = resolve));
        finished++;
      },
    });
    c.queue.add('a');
    c.queue.add('b');
    await waitFor(() => started === 1);
    let stopped = false;
    const stopping = c.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(1);
    expect(started).toBe(1);
  });
});
