import type { FastifyInstance } from 'fastify';
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
import { parse } from '../plugins/validate.js';
import { changePassword, createUser, deleteUser } from '../services/users.js';
import { verifyPassword } from '../services/secrets.js';

type NameParams = { Params: { name: string } };
const row = (u: UserRecord) => UserRow.parse(u);

/** Users (§5.7): admins manage them; anyone logged in changes their own password. */
export async function userRoutes(app: FastifyInstance, ctx: AppContext) {
  const { store } = ctx;

  app.get(
    '/api/users',
    { config: { role: 'admin', doc: { summary: 'List users', response: z.array(UserRow) } } },
    async () => (await store.list(keys.users.prefix, UserRecord)).items.map((i) => row(i.value)),
  );

  app.post(
    '/api/users',
    {
      config: {
        role: 'admin',
        action: 'user.create',
        doc: { summary: 'Create a user', body: CreateUserRequest, response: UserRow, status: 201 },
      },
    },
    async (request, reply) => {
      const body = parse(CreateUserRequest, request.body);
      request.auditSubject = body.username;
      const user = await createUser(store, body);
      reply.status(201);
      return row(user);
    },
  );

  app.put<NameParams>(
    '/api/users/:name/password',
    {
      config: {
        role: 'read-only',
        action: 'user.password',
        doc: {
          summary: "Change a password: admins any user's, a user its own (with current_password)",
          body: ChangePasswordRequest,
          response: UserRow,
        },
      },
    },
    async (request) => {
      const { name } = request.params;
      const p = request.principal;
      const self = p?.kind === 'user' && p.name === name;
      if (!self && p?.role !== 'admin')
        throw new VtlError('forbidden', `Only an admin changes the password of "${name}"; change your own.`);
      const body = parse(ChangePasswordRequest, request.body);
      if (self && p.role !== 'admin') {
        const user = await store.get(keys.users.one(name), UserRecord);
        const ok = user && (await verifyPassword(body.current_password ?? '', user.value.password_hash));
        if (!ok)
          throw new VtlError(
            'validation_failed',
            'current_password is missing or wrong; send your current password.',
          );
      }
      return row(await changePassword(store, name, body.password, p?.sessionKey));
    },
  );

  app.delete<NameParams>(
    '/api/users/:name',
    {
      config: {
        role: 'admin',
        action: 'user.delete',
        doc: { summary: 'Delete a user and end its sessions (not the last admin)', response: OkResponse },
      },
    },
    async (request) => {
      await deleteUser(store, request.params.name);
      return { ok: true as const };
    },
  );
}
