import fs from 'node:fs/promises';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerErrorHandler } from '../plugins/errors.js';
import { registerAuth } from '../plugins/auth.js';
import { startTestApp, type TestApp } from '../test/test-app.js';
import { INITIAL_PASSWORD_FILE } from '../services/users.js';
import { FREE_FAILURES } from '../services/login-throttle.js';
import { waitFor } from '@vtl/store';

describe('users, sessions, API keys and roles', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers = {}, payload?: unknown) =>
    t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  it('writes the initial admin password with mode 0600', async () => {
    const stat = await fs.stat(path.join(t.stateDir, INITIAL_PASSWORD_FILE));
    expect(stat.mode & 0o777).toBe(0o600);
  });

  it('refuses without credentials with 401 and the error body', async () => {
    const res = await call('GET', '/api/settings');
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
    expect(res.json().error.message).toMatch(/POST \/api\/auth\/login/);
    expect((await call('GET', '/healthz')).statusCode).toBe(200);
  });

  it('refuses a wrong password without saying which part was wrong', async () => {
    const res = await call('POST', '/api/auth/login', {}, { username: 'admin', password: 'nope' });
    expect(res.statusCode).toBe(401);
    const unknown = await call('POST', '/api/auth/login', {}, { username: 'ghost', password: 'nope' });
    expect(unknown.json().error.message).toBe(res.json().error.message);
  });

  it('locks a user name out from one address after repeated failures, even for the right password', async () => {
    const password = 'guess me if you can';
    await call('POST', '/api/users', t.admin, { username: 'target', password, role: 'read-only' });
    const attempt = (pw: string, username = 'target') =>
      call('POST', '/api/auth/login', {}, { username, password: pw });
    for (let i = 0; i < FREE_FAILURES + 1; i++) expect((await attempt('wrong')).statusCode).toBe(401);
    const locked = await attempt(password);
    expect(locked.statusCode).toBe(429);
    expect(locked.json().error.code).toBe('rate_limited');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(locked.json().error.message).toMatch(/try again in \d+ s/);
    // Other accounts are not affected, and the lockout ends by itself.
    expect((await attempt('nope', 'admin')).statusCode).toBe(401);
    await waitFor(async () => (await attempt(password)).statusCode === 200, { timeoutMs: 10_000 });
  });

  it('creates a read-only user who may read but not write, and change its own password', async () => {
    const created = await call('POST', '/api/users', t.admin, {
      username: 'ops',
      password: 'correct horse battery',
      role: 'read-only',
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).not.toHaveProperty('password_hash');
    const login = await call(
      'POST',
      '/api/auth/login',
      {},
      { username: 'ops', password: 'correct horse battery' },
    );
    const ops = { authorization: `Bearer ${login.json().token}` };
    expect((await call('GET', '/api/settings', ops)).statusCode).toBe(200);
    const refused = await call('PUT', '/api/settings', ops, { 'system.name': 'x' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('forbidden');
    expect((await call('GET', '/api/users', ops)).statusCode).toBe(403);
    const wrong = await call('PUT', '/api/users/ops/password', ops, { password: 'another long one' });
    expect(wrong.statusCode).toBe(400);
    const changed = await call('PUT', '/api/users/ops/password', ops, {
      password: 'another long one',
      current_password: 'correct horse battery',
    });
    expect(changed.statusCode).toBe(200);
    expect(
      (await call('PUT', '/api/users/admin/password', ops, { password: 'xxxxxxxxxxxxxxxx' })).statusCode,
    ).toBe(403);
    expect((await call('POST', '/api/auth/logout', ops)).statusCode).toBe(200);
    expect((await call('GET', '/api/settings', ops)).statusCode).toBe(401);
  });

  it('requires current_password of an admin changing its own password, throttled like logins', async () => {
    await call('POST', '/api/users', t.admin, {
      username: 'boss',
      password: 'boss-password-1',
      role: 'admin',
    });
    const login = await call(
      'POST',
      '/api/auth/login',
      {},
      { username: 'boss', password: 'boss-password-1' },
    );
    const boss = { authorization: `Bearer ${login.json().token}` };
    // A stolen admin token alone cannot lock the real admin out.
    const bare = await call('PUT', '/api/users/boss/password', boss, { password: 'taken-over-pass' });
    expect(bare.statusCode).toBe(400);
    expect(bare.json().error.message).toMatch(/current_password/);
    for (let i = 1; i <= FREE_FAILURES; i++) {
      const wrong = await call('PUT', '/api/users/boss/password', boss, {
        password: 'taken-over-pass',
        current_password: `guess-${i}`,
      });
      expect(wrong.statusCode).toBe(400);
    }
    // Past the free failures the guesser waits, even with the right answer, as a login would.
    const locked = await call('PUT', '/api/users/boss/password', boss, {
      password: 'taken-over-pass',
      current_password: 'boss-password-1',
    });
    expect(locked.statusCode).toBe(429);
    expect(locked.json().error.code).toBe('rate_limited');
    expect(
      (await call('POST', '/api/auth/login', {}, { username: 'boss', password: 'boss-password-1' }))
        .statusCode,
    ).toBe(429);
    // An admin resetting another user's password needs no current_password (it does not know it).
    expect(
      (await call('PUT', '/api/users/boss/password', t.admin, { password: 'reset-by-admin' })).statusCode,
    ).toBe(200);
    expect((await call('DELETE', '/api/users/boss', t.admin)).statusCode).toBe(200);
  });

  it('treats a route that declares no role as admin-only (fails closed)', async () => {
    const app = Fastify();
    registerErrorHandler(app);
    registerAuth(app, t.store);
    app.post('/api/unlabelled', async () => ({ ok: true }));
    await call('POST', '/api/users', t.admin, { username: 'viewer', password: 'viewer-password-1' });
    const login = await call(
      'POST',
      '/api/auth/login',
      {},
      { username: 'viewer', password: 'viewer-password-1' },
    );
    const viewer = { authorization: `Bearer ${login.json().token}` };
    expect((await app.inject({ method: 'POST', url: '/api/unlabelled' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: '/api/unlabelled', headers: viewer })).statusCode).toBe(
      403,
    );
    expect((await app.inject({ method: 'POST', url: '/api/unlabelled', headers: t.admin })).statusCode).toBe(
      200,
    );
    await app.close();
    expect((await call('DELETE', '/api/users/viewer', t.admin)).statusCode).toBe(200);
  });

  it('keeps the last admin', async () => {
    const res = await call('DELETE', '/api/users/admin', t.admin);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/last admin/);
    expect((await call('DELETE', '/api/users/ops', t.admin)).statusCode).toBe(200);
    expect((await call('DELETE', '/api/users/ops', t.admin)).statusCode).toBe(404);
  });

  it('honours API keys only while apikeys.enabled is 1, and forgets revoked ones', async () => {
    const created = await call('POST', '/api/apikeys', t.admin, { name: 'monitoring', role: 'read-only' });
    expect(created.statusCode).toBe(201);
    const { key, id } = created.json();
    expect(key).toMatch(/^vtlk_/);
    const listed = (await call('GET', '/api/apikeys', t.admin)).json();
    expect(JSON.stringify(listed)).not.toContain(key);
    expect(listed[0]).not.toHaveProperty('key_hash');
    const bearer = { authorization: `Bearer ${key}` };
    expect((await call('GET', '/api/system', bearer)).statusCode).toBe(401);
    expect((await call('PUT', '/api/settings', t.admin, { 'apikeys.enabled': '1' })).statusCode).toBe(200);
    expect((await call('GET', '/api/system', bearer)).statusCode).toBe(200);
    expect((await call('POST', '/api/license/ack', bearer)).statusCode).toBe(403);
    expect((await call('DELETE', `/api/apikeys/${id}`, t.admin)).statusCode).toBe(200);
    expect((await call('GET', '/api/system', bearer)).statusCode).toBe(401);
  });

  it('audits who asked for what, newest first, in pages, without secrets', async () => {
    const page = (await call('GET', '/api/audit?limit=3', t.admin)).json();
    expect(page.entries).toHaveLength(3);
    expect(page.entries[0].id).toBeGreaterThan(page.entries[1].id);
    const next = (await call('GET', `/api/audit?limit=3&before=${page.next_before}`, t.admin)).json();
    expect(next.entries[0].id).toBeLessThan(page.entries[2].id);
    const all = (await call('GET', '/api/audit?limit=1000', t.admin)).json().entries;
    expect(all.find((e: any) => e.action === 'user.delete' && e.subject === 'ops')).toMatchObject({
      actor: { kind: 'user', name: 'admin' },
      outcome: 'refused',
      status: 404,
    });
    expect(all.find((e: any) => e.action === 'settings.update' && e.actor.name === 'ops')).toMatchObject({
      outcome: 'refused',
      status: 403,
    });
    expect(JSON.stringify(all)).not.toMatch(/correct horse|another long one|vtlk_|vtls_/);
  });

  it('marks the initial admin as must_change_password until its password is changed', async () => {
    const initial = (await fs.readFile(path.join(t.stateDir, INITIAL_PASSWORD_FILE), 'utf8')).trim();
    const first = await call('POST', '/api/auth/login', {}, { username: 'admin', password: initial });
    expect(first.json().must_change_password).toBe(true);
    const session = { authorization: `Bearer ${first.json().token}` };
    expect((await call('GET', '/api/auth/whoami', session)).json().must_change_password).toBe(true);
    const changed = await call('PUT', '/api/users/admin/password', session, {
      current_password: initial,
      password: 'the admin chose this one',
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).not.toHaveProperty('must_change_password');
    // Every other session of admin ended, the harness's too: the tests go on with this one.
    t.admin.authorization = session.authorization;
    // The session that changed it goes on, now without the flag; a new login has none either.
    expect((await call('GET', '/api/auth/whoami', session)).json().must_change_password).toBe(false);
    const again = await call(
      'POST',
      '/api/auth/login',
      {},
      { username: 'admin', password: 'the admin chose this one' },
    );
    expect(again.json().must_change_password).toBe(false);
    // A user an admin creates is never asked.
    await call('POST', '/api/users', session, { username: 'fresh', password: 'fresh user password' });
    const fresh = await call(
      'POST',
      '/api/auth/login',
      {},
      { username: 'fresh', password: 'fresh user password' },
    );
    expect(fresh.json().must_change_password).toBe(false);
  });
});

describe('session expiry', () => {
  const TTL_SEC = 60;
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ VTL_SESSION_TTL_SEC: String(TTL_SEC) });
  });
  afterAll(async () => {
    vi.useRealTimers();
    await t?.close();
  });

  it('refuses a session once its lifetime is over', async () => {
    const whoami = () => t.app.inject({ method: 'GET', url: '/api/auth/whoami', headers: t.admin });
    expect((await whoami()).json()).toMatchObject({ kind: 'user', name: 'admin', role: 'admin' });
    // Only the wall clock moves on: the session's lifetime passes without a slow test.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + (TTL_SEC + 1) * 1000);
    const res = await whoami();
    vi.useRealTimers();
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toMatch(/expired/);
  });
});
