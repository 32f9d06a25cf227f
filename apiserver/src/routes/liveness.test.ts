import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { keys } from '@vtl/api';
import { putTestLibrary, putTestNodeStatus, putTestPool } from '@vtl/store/testing';
import { startTestApp, type TestApp } from '../test/test-app.js';

/**
 * "Not live" is said only when known (docs/api.md, "Store stalls and health"): an applied
 * library whose node has no status record (its lease lapsed) is unknown, answered 503.
 */
describe('refusals that rest on liveness', () => {
  let t: TestApp;
  const post = (url: string, payload: object) =>
    t.app.inject({ method: 'POST', url, headers: t.admin, payload });

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.store.deletePrefix(keys.nodeStatus.prefix);
    await t.store.deletePrefix(keys.libraryStatus.prefix);
    await putTestPool(t.store);
    await putTestLibrary(t.store);
  });

  const calls = () => [
    post('/api/cartridges', { library: 1, count: 1 }),
    post('/api/cartridges', { library: 0, count: 1 }),
    post('/api/libraries/1/drives/0/load', { label: 'ABC001L8' }),
  ];

  it('answers 503 unavailable with Retry-After for an applied library whose node does not report', async () => {
    await t.store.put(keys.libraryStatus.one(1), { id: 1, state: 'active' });
    for (const res of await Promise.all(calls())) {
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().error.code).toBe('unavailable');
      expect(res.json().error.message).not.toMatch(/apply it first/);
      expect(res.json().error.details).toMatchObject({ library: 1, node: 'n1' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('answers 503 saying the data plane restarts when the node reports without an applied library', async () => {
    await t.store.put(keys.libraryStatus.one(1), {
      id: 1,
      state: 'active',
      phase: 'degraded',
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'NotServed',
          message: 'The emulator restarts; it comes back by itself.',
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    });
    await putTestNodeStatus(t.store, []);
    for (const res of await Promise.all(calls())) {
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().error.code).toBe('unavailable');
      expect(res.json().error.message).toMatch(
        /applied but its data plane is not serving it.*NotServed.*no apply is needed/,
      );
      expect(res.json().error.details).toMatchObject({ library: 1, node: 'n1', phase: 'degraded' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('answers 400 "not live" for a library never applied, whatever the node', async () => {
    for (const res of await Promise.all(calls())) expect(res.statusCode, res.body).toBe(400);
    await putTestNodeStatus(t.store, []);
    for (const res of await Promise.all(calls())) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error.message).toMatch(/apply/);
    }
  });
});
