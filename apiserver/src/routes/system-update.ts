import type { FastifyInstance } from 'fastify';
import { ConfirmRequest, RollbackAnswer, UpdateAccepted, UpdateStatus } from '@vtl/api';
import type { AppContext } from '../context.js';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { acceptRollback, acceptUpdate, updateStatus } from '../services/system-update.js';

/**
 * §4.3 and §2.20: signed updates through the detached updater (docs/updates.md;
 * services/system-update.ts). In its own encapsulated plugin so the multipart body reaches only
 * POST /api/system/update unparsed.
 */
export async function systemUpdateRoutes(parent: FastifyInstance, ctx: AppContext) {
  const config = ctx.config.update;
  await parent.register(async (app) => {
    // The handler streams the body itself (receiveBundle): Fastify must leave it unread.
    app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
    app.get(
      '/api/system/update-status',
      { config: { role: 'read-only', doc: { summary: 'Update status (§2.20)', response: UpdateStatus } } },
      async () => updateStatus(ctx, config),
    );
    app.post(
      '/api/system/update',
      {
        bodyLimit: 1024, // never used for multipart (streamed), bounds anything else
        config: {
          role: 'admin',
          action: 'system.update',
          doc: {
            summary:
              'Upload a signed release bundle (multipart/form-data: file field `bundle`, optional `force=1`); 202 once the detached updater owns the apply',
            response: UpdateAccepted,
            status: 202,
          },
        },
      },
      async (request, reply) => {
        const accepted = await acceptUpdate(ctx, config, request.raw, (version) => {
          request.auditSubject = version;
        });
        reply.code(202);
        return accepted;
      },
    );
    app.withTypeProvider<ZodTypeProvider>().post(
      '/api/system/rollback',
      {
        schema: { body: ConfirmRequest('rollback'), response: { 200: RollbackAnswer } },
        config: {
          role: 'admin',
          action: 'system.rollback',
          doc: { summary: 'Roll back to the last-known-good release and its store snapshot' },
        },
      },
      async (request) =>
        acceptRollback(ctx, config, (version) => {
          request.auditSubject = version;
        }),
    );
  });
}
