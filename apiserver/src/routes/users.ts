import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import {
  ChangePasswordRequest,
  CreateUserRequest,
  OkResponse,
  UserRecord,
  UserRow,
  VtlError,
  keys,
} from '@vtl/api';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { validInput } from '../plugins/validate.js';
import { changePassword, createUser, deleteUser } from '../services/users.js';
import { verifyPassword } from '../services/secrets.js';
import { passwordThrottle } from '../services/login-throttle.js';

const row = (u: UserRecord) => UserRow.parse(u);

/** Users (§5.7): admins manage them; anyone logged in changes their own password. */
export async function userRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;
  const throttle = passwordThrottle(ctx);

  r.get(
    '/api/users',
    {
      schema: { response: { 200: z.array(UserRow) } },
      config: { role: 'admin', doc: { summary: 'List users' } },
    },
    async () => (await store.list(keys.users.prefix, UserRecord)).items.map((i) => row(i.value)),
  );

  r.post(
    '/api/users',
    {
      schema: { body: CreateUserRequest, response: { 201: UserRow } },
      config: {
        role: 'admin',
        action: 'user.create',
        doc: { summary: 'Create a user', status: 201 },
      },
    },
    async (request, reply) => {
      const body = request.body;
      request.auditSubject = body.username;
      const user = await createUser(store, body);
      reply.status(201);
      return row(user);
    },
  );

  r.put(
    '/api/users/:name/password',
    {
      // Validated where the handler says: its own refusals come first, as they always did.
      attachValidation: true,
      schema: {
        params: z.object({ name: z.string() }),
        body: ChangePasswordRequest,
        response: { 200: UserRow },
      },
      config: {
        role: 'read-only',
        action: 'user.password',
        doc: {
          summary: "Change a password: admins any user's, everyone its own (with current_password)",
        },
      },
    },
    async (request) => {
      const { name } = request.params;
      const p = request.principal;
      const self = p?.kind === 'user' && p.name === name;
      if (!self && p?.role !== 'admin')
        throw new VtlError('forbidden', `Only an admin changes the password of "${name}"; change your own.`);
      validInput(request);
      const body = request.body;
      // Everyone changing their own password proves they know it, admins too: a stolen session
      // token alone must not lock the real user out. Wrong answers are throttled like logins.
      if (self) {
        throttle.check(name, request.ip);
        const user = await store.get(keys.users.one(name), UserRecord);
        const ok = user && (await verifyPassword(body.current_password ?? '', user.value.password_hash));
        if (!ok) {
          throttle.failed(name, request.ip);
          throw new VtlError(
            'validation_failed',
            'current_password is missing or wrong; send your current password.',
          );
        }
      }
      return row(await changePassword(store, name, body.password, p?.sessionKey));
    },
  );

  r.delete(
    '/api/users/:name',
    {
      schema: { params: z.object({ name: z.string() }), response: { 200: OkResponse } },
      config: {
        role: 'admin',
        action: 'user.delete',
        doc: { summary: 'Delete a user and end its sessions (not the last admin)' },
      },
    },
    async (request) => {
      await deleteUser(store, request.params.name);
      return { ok: true as const };
    },
  );
}
