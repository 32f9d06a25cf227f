import { describe, expect, it } from 'vitest';
import { VtlError, isoNow, keys, type Op } from '@vtl/api';
import type { Store } from '@vtl/store';
import { awaitOpResult, watchOpUntilFinished } from './op-wait.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const op = (id: number, state: Op['state'], result?: unknown): Op => ({
  id,
  kind: 'apply',
  executor: 'controller',
  params: {},
  state,
  steps: [],
  requested_by: '',
  created_at: isoNow(),
  ...(result === undefined ? {} : { result }),
});

const t = useTestStore();

/** The op wait on a real etcd: a watch of the op's record, from the revision it was read at. */
describe('watchOpUntilFinished', () => {
  it('sees a result written between its read and the start of its watch', async () => {
    await t.store.put(keys.ops.one(1), op(1, 'running'));
    // The store as the wait sees it: the executor finishes the op just before the watch starts.
    const racing = new Proxy(t.store, {
      get(target, prop) {
        if (prop === 'watch')
          return async (...args: Parameters<Store['watch']>) => {
            await target.put(keys.ops.one(1), op(1, 'succeeded', { done: true }));
            return target.watch(...args);
          };
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const started = Date.now();
    const seen = await watchOpUntilFinished(racing, 1, 10_000);
    expect(seen).toMatchObject({ state: 'succeeded', result: { done: true } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('answers as soon as the record is finished, without polling', async () => {
    await t.store.put(keys.ops.one(2), op(2, 'pending'));
    const waiting = watchOpUntilFinished(t.store, 2, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    await t.store.put(keys.ops.one(2), op(2, 'running'));
    const finishedAt = Date.now();
    await t.store.put(keys.ops.one(2), op(2, 'failed'));
    expect((await waiting)?.state).toBe('failed');
    expect(Date.now() - finishedAt).toBeLessThan(1_000);
  });

  it('gives the record as last seen at the deadline, counted from the call', async () => {
    await t.store.put(keys.ops.one(3), op(3, 'pending'));
    const started = Date.now();
    const waiting = watchOpUntilFinished(t.store, 3, 800);
    await new Promise((r) => setTimeout(r, 100));
    await t.store.put(keys.ops.one(3), op(3, 'running'));
    expect((await waiting)?.state).toBe('running');
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(790);
    expect(took).toBeLessThan(3_000);
    expect(await watchOpUntilFinished(t.store, 99, 100)).toBeUndefined();
  });
});

/** The wait every submitter uses: a store outage is waited out; a failure keeps the steps. */
describe('awaitOpResult', () => {
  const opts = { timeoutMs: 10_000, timeoutMessage: (id: number) => `op ${id} goes on` };

  it('waits out a store that does not answer, then answers the result', async () => {
    await t.store.put(keys.ops.one(10), op(10, 'succeeded', { done: true }));
    // The first reads fail as a stalled etcd fails them; the op was recorded already.
    let outage = 3;
    const stalled = new Proxy(t.store, {
      get(target, prop) {
        if (prop === 'get' && outage > 0)
          return async () => {
            outage -= 1;
            throw new VtlError('unavailable', 'etcd does not answer');
          };
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await expect(awaitOpResult(stalled, 10, opts)).resolves.toEqual({ done: true });
    expect(outage).toBe(0);
  });

  it("throws the executor's error with the op's steps, and a timeout naming the op", async () => {
    await t.store.put(keys.ops.one(11), {
      ...op(11, 'failed'),
      steps: ['one'],
      error: { code: 'conflict', message: 'no', details: { library: 3 } },
    });
    await expect(awaitOpResult(t.store, 11, opts)).rejects.toMatchObject({
      code: 'conflict',
      message: 'no',
      details: { library: 3, steps: ['one'] },
    });
    await t.store.put(keys.ops.one(12), op(12, 'running'));
    await expect(awaitOpResult(t.store, 12, { ...opts, timeoutMs: 300 })).rejects.toMatchObject({
      code: 'timeout',
      message: 'op 12 goes on',
      details: { op: 12 },
    });
  });
});
