import type { FastifyInstance } from 'fastify';
import { LoginRequest, LoginResponse, OkResponse, WhoAmI, badRequest } from '@vtl/api';
import type { AppContext } from '../context.js';
import { parse } from '../plugins/validate.js';
import { login } from '../services/users.js';
import { readSettings } from '../services/identity.js';

/** Login sessions (§5; mechanics in docs/api.md "Authentication"). */
export async function authRoutes(app: FastifyInstance, ctx: AppContext) {
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
      return LoginResponse.parse(
        await login(ctx.store, body.username, body.password, ctx.config.sessionTtlSec),
      );
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
