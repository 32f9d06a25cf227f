import { request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../test/test-app.js';
import { fastPathAnswers } from './view-fast-path.js';

let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(() => t?.close());

/** A real request on the listener (inject() never reaches the server's request listener). */
async function get(path: string, authorization?: string) {
  const res = await fetch(base + path, { headers: authorization ? { authorization } : {} });
  return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
}

/** The raw answer to a GET with these headers, its body as sent (fetch would decompress it). */
function rawGet(path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    request(base + path, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    })
      .on('error', reject)
      .end();
  });
}

const withoutTime = (text: string) => text.replace(/"updated_at":"[^"]+"/, '');
const SAME_HEADERS = [
  'content-type',
  'cache-control',
  'x-content-type-options',
  'content-length',
  'content-encoding',
  'vary',
];
const VIEWS = ['/api/status', '/api/library', '/api/targets', '/api/cartridges', '/api/libraries'];

describe('the cached views answered before Fastify', () => {
  it('answers what the Fastify route answers, with the same headers', async () => {
    for (const view of VIEWS) {
      const before = fastPathAnswers(t.app);
      const fast = await get(view, t.admin.authorization);
      expect(fastPathAnswers(t.app), view).toBe(before + 1);
      // A query string is not a cached view's URL: Fastify's route answers it.
      const routed = await get(`${view}?x=1`, t.admin.authorization);
      expect(fastPathAnswers(t.app)).toBe(before + 1);
      expect(fast.status).toBe(200);
      expect(routed.status).toBe(200);
      expect(withoutTime(fast.text)).toBe(withoutTime(routed.text));
      for (const h of SAME_HEADERS) expect(fast.headers[h], `${view} ${h}`).toBe(routed.headers[h]);
    }
  });

  it('gzips for a client that takes it: the same bytes once decompressed, on either path', async () => {
    const authorization = t.admin.authorization;
    for (const view of VIEWS) {
      // The fast path, and Fastify's route (a query string is not a cached view's URL).
      for (const path of [view, `${view}?x=1`]) {
        const before = fastPathAnswers(t.app);
        const plain = await rawGet(path, { authorization, 'accept-encoding': 'identity' });
        const gzipped = await rawGet(path, { authorization, 'accept-encoding': 'br;q=1, gzip;q=0.8' });
        expect(fastPathAnswers(t.app) - before, path).toBe(path === view ? 2 : 0);
        expect([plain.status, gzipped.status]).toEqual([200, 200]);
        expect(gzipped.headers['content-encoding'], path).toBe('gzip');
        expect(gzipped.headers.vary, path).toBe('accept-encoding');
        expect(Number(gzipped.headers['content-length'])).toBe(gzipped.body.length);
        expect(plain.headers['content-encoding'], path).toBeUndefined();
        expect(plain.headers.vary, path).toBe('accept-encoding');
        const inflated = gunzipSync(gzipped.body);
        if (view === '/api/status') {
          // Its `updated_at` is the time of each answer; everything after it is the same bytes.
          const after = (b: Buffer) => b.subarray(b.indexOf(',"') + 1);
          expect(after(inflated).equals(after(plain.body)), path).toBe(true);
        } else expect(inflated.equals(plain.body), path).toBe(true);
      }
    }
  });

  it('leaves every refusal to Fastify: no, malformed or unknown credentials get the 401 body', async () => {
    const before = fastPathAnswers(t.app);
    for (const auth of [undefined, 'Basic abc', 'Bearer vtls_nosuchsession', 'Bearer nonsense']) {
      const res = await get('/api/status', auth);
      expect(res.status, String(auth)).toBe(401);
      expect(JSON.parse(res.text).error.code).toBe('unauthorized');
    }
    expect(fastPathAnswers(t.app)).toBe(before);
  });

  it('refuses a session on the very request after its logout', async () => {
    const created = await t.call('POST', '/api/users', {
      username: 'viewer',
      password: 'correct horse battery',
      role: 'read-only',
    });
    expect(created.statusCode).toBe(201);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'viewer', password: 'correct horse battery' },
    });
    const viewer = `Bearer ${login.json().token}`;
    expect((await get('/api/targets', viewer)).status).toBe(200);
    const out = await t.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: { authorization: viewer },
    });
    expect(out.statusCode).toBe(200);
    const after = await get('/api/targets', viewer);
    expect(after.status).toBe(401);
    expect(JSON.parse(after.text).error.code).toBe('unauthorized');
  });

  it('serves a record this apiserver just wrote on the very next read (read-your-writes)', async () => {
    expect((await t.call('PUT', '/api/settings', { 'apikeys.enabled': '1' })).statusCode).toBe(200);
    const created = await t.call('POST', '/api/apikeys', { name: 'probe', role: 'read-only' });
    expect(created.statusCode).toBe(201);
    const before = fastPathAnswers(t.app);
    expect((await get('/api/targets', `Bearer ${created.json().key}`)).status).toBe(200);
    expect(fastPathAnswers(t.app)).toBe(before + 1);
    expect((await t.call('DELETE', `/api/apikeys/${created.json().id}`)).statusCode).toBe(200);
    expect((await get('/api/targets', `Bearer ${created.json().key}`)).status).toBe(401);
  });

  it('forgets a remembered key once API keys are switched off', async () => {
    expect((await t.call('PUT', '/api/settings', { 'apikeys.enabled': '1' })).statusCode).toBe(200);
    const created = await t.call('POST', '/api/apikeys', { name: 'poller', role: 'read-only' });
    const key = `Bearer ${created.json().key}`;
    // Remembered by the fast path after the first answer; the second comes from that memory.
    const before = fastPathAnswers(t.app);
    for (let i = 0; i < 2; i++) expect((await get('/api/library', key)).status).toBe(200);
    expect(fastPathAnswers(t.app)).toBe(before + 2);
    expect((await t.call('PUT', '/api/settings', { 'apikeys.enabled': '0' })).statusCode).toBe(200);
    const after = await get('/api/library', key);
    expect(after.status).toBe(401);
    expect(JSON.parse(after.text).error.message).toMatch(/apikeys.enabled/);
  });
});
