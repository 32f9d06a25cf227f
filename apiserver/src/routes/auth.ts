import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import {
  LoginRequest,
  LoginResponse,
  OkResponse,
  UserRecord,
  VtlError,
  WhoAmI,
  badRequest,
  keys,
} from '@vtl/api';
import type { AppContext } from '../context.js';
import { endSession, login } from '../services/users.js';
import { readSettings } from '../services/identity.js';
import { passwordThrottle } from '../services/login-throttle.js';

/** Login sessions (§5; mechanics in docs/api.md "Authentication"). */
export async function authRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const throttle = passwordThrottle(ctx);
  r.post(
    '/api/auth/login',
    {
      schema: { body: LoginRequest, response: { 200: LoginResponse } },
      config: {
        role: 'public',
        action: 'auth.login',
        doc: { summary: 'Log in; returns a session token' },
      },
    },
    async (request) => {
      const body = request.body;
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

  r.post(
    '/api/auth/logout',
    {
      schema: { response: { 200: OkResponse } },
      config: {
        role: 'read-only',
        action: 'auth.logout',
        doc: { summary: 'End the session whose token the request carries' },
      },
    },
    async (request) => {
      const p = request.principal;
      if (!p?.sessionKey)
        throw badRequest('Logout ends a session; an API key is revoked with DELETE /api/apikeys/{id}.');
      request.auditSubject = p.name;
      await endSession(ctx.store, p.sessionKey);
      return { ok: true as const };
    },
  );

  r.get(
    '/api/auth/whoami',
    {
      schema: { response: { 200: WhoAmI } },
      config: {
        role: 'read-only',
        doc: { summary: 'The principal of the request and its role' },
      },
    },
    async (request) => {
      const p = request.principal;
      const settings = await readSettings(ctx.store);
      const user = p?.kind === 'user' ? await ctx.store.get(keys.users.one(p.name), UserRecord) : undefined;
      return WhoAmI.parse({
        ...p,
        apikeys_enabled: settings['apikeys.enabled'] === '1',
        must_change_password: user?.value.must_change_password === true,
      });
    },
  );
}
