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
import { idParam, validInput } from '../plugins/validate.js';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
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
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;
  const params = z.object({ id: z.string() });
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

  r.get(
    '/api/remotes',
    {
      schema: { response: { 200: z.array(Remote) } },
      config: { role: 'read-only', doc: { summary: 'Remotes (§2.16)' } },
    },
    async () => listRemotes(store),
  );

  r.get(
    '/api/remotes/:id',
    {
      schema: { params, response: { 200: Remote } },
      config: { role: 'read-only', doc: { summary: 'One remote' } },
    },
    async (request) => getRemote(store, idParam(request.params.id, 'remote')),
  );

  r.post(
    '/api/remotes',
    {
      schema: { body: CreateRemoteRequest, response: { 201: Remote } },
      config: {
        role: 'admin',
        action: 'remote.create',
        doc: { summary: 'Create a remote', status: 201 },
      },
    },
    async (request, reply) => {
      const remote = await createRemote(store, request.body);
      request.auditSubject = `remote:${remote.id}`;
      reply.code(201);
      return remote;
    },
  );

  r.put(
    '/api/remotes/:id',
    {
      // Validated where the handler says: an id that names no remote is a 404 before the body's 400.
      attachValidation: true,
      schema: { params, body: UpdateRemoteRequest, response: { 200: Remote } },
      config: {
        role: 'admin',
        action: 'remote.update',
        doc: { summary: 'Update a remote (empty secret_key keeps it)' },
      },
    },
    async (request) => {
      const id = idParam(request.params.id, 'remote');
      validInput(request);
      return updateRemote(store, id, request.body);
    },
  );

  r.delete(
    '/api/remotes/:id',
    {
      schema: { params },
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

  r.post(
    '/api/remotes/:id/test',
    {
      schema: { params, response: { 200: RemoteTestResult } },
      config: {
        role: 'admin',
        action: 'remote.test',
        doc: { summary: 'Write, read and delete a probe object' },
      },
    },
    async (request) => {
      const id = idParam(request.params.id, 'remote');
      await remoteRecord(store, id);
      // The controller records the outcome on the remote; a failed probe is still 200 ok: false.
      const { result } = await remoteOp<z.infer<typeof RemoteTestResult>>(
        'remote_test',
        request.principal?.name ?? '',
        {
          remote_id: id,
        },
      );
      return result;
    },
  );

  r.get(
    '/api/remotes/:id/objects',
    {
      schema: { params, response: { 200: RemoteObjects } },
      config: { role: 'read-only', doc: { summary: 'Every object under the remote prefix' } },
    },
    async (request) => {
      const id = idParam(request.params.id, 'remote');
      await remoteRecord(store, id);
      const listed = await remoteOp<{ parts: number }>('remote_objects_list', request.principal?.name ?? '', {
        remote_id: id,
      });
      return { objects: await takeListing(store, listed.id, listed.result.parts) };
    },
  );

  r.delete(
    '/api/remotes/:id/objects',
    {
      // Validated where the handler says: an id that names no remote is a 404 before the body's 400.
      attachValidation: true,
      schema: { params, body: DeleteRemoteObjectsRequest, response: { 200: DeleteRemoteObjectsResponse } },
      // The prefix may come as a body field or a query parameter (DELETE bodies are often
      // dropped): a query prefix becomes the body the schema checks, as it always replaced it.
      preValidation: async (request) => {
        const { prefix } = request.query as { prefix?: unknown };
        if (prefix !== undefined) (request as { body: unknown }).body = { prefix };
      },
      config: {
        role: 'admin',
        action: 'remote.objects.delete',
        doc: { summary: 'Delete every object under a folder prefix (must end with /)' },
      },
    },
    async (request) => {
      const id = idParam(request.params.id, 'remote');
      validInput(request);
      const { prefix } = request.body;
      if (!prefix.endsWith('/'))
        throw badRequest(`prefix must end with "/" (a folder), e.g. "${prefix}/"; nothing was deleted.`);
      if (/^\/+$/.test(prefix) || prefix.split('/').some((part) => part === '..' || part === '.'))
        throw badRequest(
          'prefix must name a folder under the remote prefix, e.g. "site/SERIAL/ABC001L8/"; nothing was deleted.',
        );
      request.auditSubject = `remote:${id}:${prefix}`;
      await remoteRecord(store, id);
      const { result } = await remoteOp<z.infer<typeof DeleteRemoteObjectsResponse>>(
        'remote_objects_delete',
        request.principal?.name ?? '',
        {
          remote_id: id,
          prefix,
        },
      );
      return result;
    },
  );
}
