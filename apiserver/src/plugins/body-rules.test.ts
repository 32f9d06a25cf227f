import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../test/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
}, 60_000);
afterAll(() => t?.close());

/** POST /api/apikeys with a raw body, so escapes and duplicate keys reach the server as written. */
const create = (body: string, contentType = 'application/json') =>
  t.app.inject({
    method: 'POST',
    url: '/api/apikeys',
    headers: { ...t.admin, 'content-type': contentType },
    payload: body,
  });

describe('one rule for bodies and display strings (issue 34, item 10)', () => {
  it('refuses a lone UTF-16 surrogate in a display string, keeps a real pair', async () => {
    for (const name of ['a\\ud800b', 'x\\udc00', 'end\\ud83d']) {
      const res = await create(`{"name":"${name}"}`);
      expect(res.statusCode, name).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'validation_failed' });
      expect(res.json().error.message).toMatch(/surrogate/);
    }
    const pair = await create('{"name":"tape \\ud83d\\udcbe"}');
    expect(pair.statusCode, pair.body).toBe(201);
    expect(pair.json().name).toBe('tape \u{1F4BE}');
  });

  it('refuses duplicate keys in any object of the body', async () => {
    for (const body of ['{"name":"a","name":"b"}', '{"name":"a","role":"read-only","role":"admin"}']) {
      const res = await create(body);
      expect(res.statusCode, body).toBe(400);
      expect(res.json().error.message).toMatch(/twice/);
    }
    // The same key in different objects, or as a value, is no duplicate.
    expect((await create('{"name":"name","role":"read-only"}')).statusCode).toBe(201);
  });

  it('refuses a malformed Content-Type with 415', async () => {
    for (const type of [
      'application/json;;;',
      'application/json; charset=utf-8; x=1',
      'application/json;foo',
    ]) {
      const res = await create('{"name":"k"}', type);
      expect(res.statusCode, type).toBe(415);
      expect(res.json().error.code).toBe('unsupported_media_type');
    }
    expect((await create('{"name":"k2"}', 'application/json; charset=UTF-8')).statusCode).toBe(201);
  });
});
