import type { FastifyInstance } from 'fastify';
import { LoginRequest, LoginResponse, OkResponse, VtlError, WhoAmI, badRequest } from '@vtl/api';
import type { AppContext } from '../context.js';
import { parse } from '../plugins/validate.js';
import { login } from '../services/users.js';
import { readSettings } from '../services/identity.js';
import { LoginThrottle } from '../services/login-throttle.js';

/** Login sessions (§5; mechanics in docs/api.md "Authentication"). */
export async function authRoutes(app: FastifyInstance, ctx: AppContext) {
  const throttle = new LoginThrottle();
  app.post(
    '/api/auth/login',
    {
      config: {
        role: 'public',
        action: 'auth.login',
        doc: { summary: 'Log in; returns a session token', body: LoginRequest, response: LoginResponse },
      },
    },
    async (request) => {
      const body = parse(LoginRequest, request.body);
      request.auditSubject = body.username;
      throttle.check(body.username, request.ip);
      try {
        const session = await login(ctx.store, body.username, body.password, ctx.config.sessionTtlSec);
        throttle.succeeded(body.username, request.ip);
        return LoginResponse.parse(session);
      } catch (err) {
        if (err instanceof VtlError && err.code === 'unauthorized')
          throttle.failed(body.username, request.ip);
        throw err;
      }
    },
  );

  app.post(
    '/api/auth/logout',
    {
      config: {
        role: 'read-only',
        action: 'auth.logout',
        doc: { summary: 'End the session whose token the request carries', response: OkResponse },
      },
    },
    async (request) => {
      const p = request.principal;
      if (!p?.sessionKey)
        throw badRequest('Logout ends a session; an API key is revoked with DELETE /api/apikeys/{id}.');
      request.auditSubject = p.name;
      await ctx.store.delete(p.sessionKey);
      return { ok: true as const };
    },
  );

  app.get(
    '/api/auth/whoami',
    {
      config: {
        role: 'read-only',
        doc: { summary: 'The principal of the request and its role', response: WhoAmI },
      },
    },
    async (request) => {
      const p = request.principal;
      const settings = await readSettings(ctx.store);
      return WhoAmI.parse({ ...p, apikeys_enabled: settings['apikeys.enabled'] === '1' });
    },
  );
}
