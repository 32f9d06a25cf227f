import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../test/test-app.js';

/** Within a second of the revocation, with slack for a busy machine. */
const END_WITHIN_MS = 1_500;

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await startTestApp({ VTL_SSE_KEEPALIVE_MS: '60000' });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
}, 60_000);
afterAll(() => t?.close());

/** An open GET /api/events on the listener: resolves `ended` when the server ends the stream. */
async function openStream(token: string): Promise<{ ended: Promise<number>; abort(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { port, path: '/api/events', headers: { authorization: `Bearer ${token}` } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        res.once('data', () => {
          // The first comment has arrived: the stream is open.
          const ended = new Promise<number>((done) => res.once('close', () => done(performance.now())));
          res.resume();
          resolve({ ended, abort: () => req.destroy() });
        });
      },
    );
    req.on('error', reject);
  });
}

async function login(username: string, password: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().token;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Resolves how long after `revoke` the stream ended; rejects if it is still open past the bound. */
async function endsAfter(stream: { ended: Promise<number>; abort(): void }, revoke: () => Promise<void>) {
  const start = performance.now();
  await revoke();
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error('the stream outlived its credentials')), END_WITHIN_MS).unref(),
  );
  try {
    return (await Promise.race([stream.ended, timeout])) - start;
  } finally {
    stream.abort();
  }
}

describe('an open event stream ends when its credentials are revoked (issue 34, item 5)', () => {
  it('ends on logout of its session', async () => {
    await t.call('POST', '/api/users', {
      username: 'watcher1',
      password: 'watcher-one-pass',
      role: 'read-only',
    });
    const token = await login('watcher1', 'watcher-one-pass');
    const stream = await openStream(token);
    const ms = await endsAfter(stream, async () => {
      const res = await t.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(token) });
      expect(res.statusCode).toBe(200);
    });
    expect(ms).toBeLessThan(END_WITHIN_MS);
  });

  it("ends when the user's password changes (its other sessions end)", async () => {
    await t.call('POST', '/api/users', {
      username: 'watcher2',
      password: 'watcher-two-pass',
      role: 'read-only',
    });
    const streamed = await login('watcher2', 'watcher-two-pass');
    const other = await login('watcher2', 'watcher-two-pass');
    const stream = await openStream(streamed);
    const ms = await endsAfter(stream, async () => {
      const res = await t.app.inject({
        method: 'PUT',
        url: '/api/users/watcher2/password',
        headers: bearer(other),
        payload: { password: 'watcher-two-new', current_password: 'watcher-two-pass' },
      });
      expect(res.statusCode, res.body).toBe(200);
    });
    expect(ms).toBeLessThan(END_WITHIN_MS);
  });

  it('ends when the user is deleted', async () => {
    await t.call('POST', '/api/users', {
      username: 'watcher3',
      password: 'watcher-three-pass',
      role: 'read-only',
    });
    const stream = await openStream(await login('watcher3', 'watcher-three-pass'));
    const ms = await endsAfter(stream, async () => {
      expect((await t.call('DELETE', '/api/users/watcher3')).statusCode).toBe(200);
    });
    expect(ms).toBeLessThan(END_WITHIN_MS);
  });

  it('ends when its API key is revoked, and stays open while nothing is revoked', async () => {
    await t.call('PUT', '/api/settings', { 'apikeys.enabled': '1' });
    const key = (await t.call('POST', '/api/apikeys', { name: 'watcher', role: 'read-only' })).json();
    const stream = await openStream(key.key);
    const early = await Promise.race([
      stream.ended.then(() => 'ended'),
      new Promise((r) => setTimeout(() => r('open'), 1_200)),
    ]);
    expect(early).toBe('open');
    const ms = await endsAfter(stream, async () => {
      expect((await t.call('DELETE', `/api/apikeys/${key.id}`)).statusCode).toBe(200);
    });
    expect(ms).toBeLessThan(END_WITHIN_MS);
  });
});
