import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '@vtl/api';
import { startTestApp, type TestApp } from '../test/test-app.js';

/**
 * The routes' zod schemas run as Fastify's validators: a refused input answers the one error
 * body (docs/api.md) and changes nothing, a missing body is checked as an empty one, and a route
 * whose own refusal came first (an unknown library) still answers that.
 */
describe('zod schemas as Fastify validators', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it('answers a failed body check with the documented 400 body and writes nothing', async () => {
    const res = await t.call('POST', '/api/pools', { name: 'p1', path: 'relative', colour: 'red' });
    expect(res.statusCode).toBe(400);
    const { error } = res.json();
    expect(error.code).toBe('validation_failed');
    expect(error.message).toMatch(/unknown field\(s\): colour/);
    expect(error.message).toMatch(/path must be absolute/);
    expect(error.details.issues).toEqual(error.message.split('; '));
    expect(await t.store.listKeys(keys.pools.prefix)).toEqual([]);
  });

  it('checks a missing body as an empty object, naming the required field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/libraries/apply', headers: t.admin });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('validation_failed');
    expect(res.json().error.message).toMatch(/^confirm/);
  });

  it('answers 404 for an unknown library before looking at the body', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: '/api/libraries/999', headers: t.admin });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json().error.code).toBe('not_found');
  });

  it('checks a query string the same way', async () => {
    const res = await t.call('GET', '/api/jobs?limit=0');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/^limit/);
  });
});
