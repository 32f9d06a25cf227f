import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  CreateRemoteRequest,
  DeleteRemoteObjectsRequest,
  DeleteRemoteObjectsResponse,
  Remote,
  RemoteObjects,
  RemoteTestResult,
  UpdateRemoteRequest,
  badRequest,
} from '@vtl/api';
import type { AppContext } from '../context.js';
import { idParam, parse } from '../plugins/validate.js';
import {
  createRemote,
  deleteRemote,
  getRemote,
  listRemotes,
  remoteRecord,
  updateRemote,
} from '../services/remotes.js';
import { runRemoteOp, takeListing } from '../services/remote-ops.js';

/**
 * §4.4 remotes. The secret key is write-only: no response, log line or event carries it. What
 * touches the bucket (test, listing, deletion) is an op the controller runs under an overall
 * deadline (VTL_REMOTE_DEADLINE_MS); the route records it and waits for its outcome.
 */
export async function remoteRoutes(app: FastifyInstance, ctx: AppContext) {
  const { store } = ctx;
  type Id = { Params: { id: string } };
  const remoteOp = <T>(
    kind: 'remote_test' | 'remote_objects_list' | 'remote_objects_delete',
    by: string,
    params: object,
  ) =>
    runRemoteOp<T>(store, {
      kind,
      params: { ...params, deadline_ms: ctx.config.remoteDeadlineMs },
      requestedBy: by,
      waitMs: ctx.config.remoteDeadlineMs,
    });

  app.get(
    '/api/remotes',
    { config: { role: 'read-only', doc: { summary: 'Remotes (§2.16)', response: z.array(Remote) } } },
    async () => listRemotes(store),
  );

  app.get<Id>(
    '/api/remotes/:id',
    { config: { role: 'read-only', doc: { summary: 'One remote', response: Remote } } },
    async (request) => getRemote(store, idParam(request.params.id, 'remote')),
  );

  app.post(
    '/api/remotes',
    {
      config: {
        role: 'admin',
        action: 'remote.create',
        doc: { summary: 'Create a remote', body: CreateRemoteRequest, response: Remote, status: 201 },
      },
    },
    async (request, reply) => {
      const body = parse(CreateRemoteRequest, request.body);
      const remote = await createRemote(store, body);
      request.auditSubject = `remote:${remote.id}`;
      reply.code(201);
      return Remote.parse(remote);
    },
  );

  app.put<Id>(
    '/api/remotes/:id',
    {
      config: {
        role: 'admin',
        action: 'remote.update',
        doc: {
          summary: 'Update a remote (empty secret_key keeps it)',
          body: UpdateRemoteRequest,
          response: Remote,
        },
      },
    },
    async (request) => {
      const id = idParam(request.params.id, 'remote');
      return Remote.parse(await updateRemote(store, id, parse(UpdateRemoteRequest, request.body)));
    },
  );

  app.delete<Id>(
    '/api/remotes/:id',
    {
      config: {
        role: 'admin',
        action: 'remote.delete',
        doc: { summary: 'Delete a remote and its cached catalog' },
      },
    },
    async (request) => {
      await deleteRemote(store, idParam(request.params.id, 'remote'));
      return { ok: true };
    },
  );

  app.post<Id>(
    '/api/remotes/:id/test',
    {
      config: {
        role: 'admin',
        action: 'remote.test',
        doc: { summary: 'Write, read and delete a probe object', response: RemoteTestResult },
      },
    },
    async (request) => {
      const id = idParam(request.params.id, 'remote');
      await remoteRecord(store, id);
      // The controller records the outcome on the remote; a failed probe is still 200 ok: false.
      const { result } = await remoteOp<unknown>('remote_test', request.principal?.name ?? '', {
        remote_id: id,
      });
      return RemoteTestResult.parse(result);
    },
  );

  app.get<Id>(
    '/api/remotes/:id/objects',
    {
      config: {
        role: 'read-only',
        doc: { summary: 'Every object under the remote prefix', response: RemoteObjects },
      },
    },
    async (request) => {
      const id = idParam(request.params.id, 'remote');
      await remoteRecord(store, id);
      const listed = await remoteOp<{ parts: number }>('remote_objects_list', request.principal?.name ?? '', {
        remote_id: id,
      });
      return RemoteObjects.parse({ objects: await takeListing(store, listed.id, listed.result.parts) });
    },
  );

  app.delete<Id & { Querystring: { prefix?: string } }>(
    '/api/remotes/:id/objects',
    {
      config: {
        role: 'admin',
        action: 'remote.objects.delete',
        doc: {
          summary: 'Delete every object under a folder prefix (must end with /)',
          body: DeleteRemoteObjectsRequest,
          response: DeleteRemoteObjectsResponse,
        },
      },
    },
    async (request) => {
      const id = idParam(request.params.id, 'remote');
      // The prefix may come as a body field or a query parameter (DELETE bodies are often dropped).
      const input = request.query.prefix !== undefined ? { prefix: request.query.prefix } : request.body;
      const { prefix } = parse(DeleteRemoteObjectsRequest, input);
      if (!prefix.endsWith('/'))
        throw badRequest(`prefix must end with "/" (a folder), e.g. "${prefix}/"; nothing was deleted.`);
      if (/^\/+$/.test(prefix) || prefix.split('/').some((part) => part === '..' || part === '.'))
        throw badRequest(
          'prefix must name a folder under the remote prefix, e.g. "site/SERIAL/ABC001L8/"; nothing was deleted.',
        );
      request.auditSubject = `remote:${id}:${prefix}`;
      await remoteRecord(store, id);
      const { result } = await remoteOp<unknown>('remote_objects_delete', request.principal?.name ?? '', {
        remote_id: id,
        prefix,
      });
      return DeleteRemoteObjectsResponse.parse(result);
    },
  );
}
