import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import { EvictRequest, ExportRequest, ImportRequest, Job } from '@vtl/api';
import type { AppContext } from '../context.js';
import { validInput } from '../plugins/validate.js';
import { refuseWhileDraining } from '../services/guards.js';
import { requestEvict, requestExport, requestImport } from '../services/cartridge-jobs.js';

/** §4.5 rules 3–7: export, evict and import jobs (services/cartridge-jobs.ts). */
export async function cartridgeJobRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;
  const principalName = (r: { principal?: { name?: string } }) => r.principal?.name ?? '';

  r.post(
    '/api/cartridges/:label/export',
    {
      // Validated where the handler says: its own refusals come first, as they always did.
      attachValidation: true,
      schema: { params: z.object({ label: z.string() }), body: ExportRequest, response: { 201: Job } },
      config: {
        role: 'admin',
        action: 'cartridge.export',
        doc: {
          summary: 'Export a cartridge to a remote (job in detected)',

          status: 201,
        },
      },
    },
    async (request, reply) => {
      const label = request.params.label.toUpperCase();
      await refuseWhileDraining(store, 'Export');
      validInput(request);
      const job = await requestExport({
        ctx,
        label,
        body: request.body,
        requestedBy: principalName(request),
      });
      request.auditSubject = `${label} job:${job.id}`;
      reply.code(201);
      return job;
    },
  );

  r.post(
    '/api/cartridges/:label/evict',
    {
      // Validated where the handler says: its own refusals come first, as they always did.
      attachValidation: true,
      schema: { params: z.object({ label: z.string() }), body: EvictRequest, response: { 201: Job } },
      config: {
        role: 'admin',
        action: 'cartridge.evict',
        doc: {
          summary: 'Evict a cartridge once its bucket copy verifies (job in queued)',

          status: 201,
        },
      },
    },
    async (request, reply) => {
      const label = request.params.label.toUpperCase();
      await refuseWhileDraining(store, 'Evict');
      validInput(request);
      const job = await requestEvict({ ctx, label, body: request.body, requestedBy: principalName(request) });
      request.auditSubject = `${label} job:${job.id}`;
      reply.code(201);
      return job;
    },
  );

  r.post(
    '/api/cartridges/:label/import',
    {
      // Validated where the handler says: its own refusals come first, as they always did.
      attachValidation: true,
      schema: { params: z.object({ label: z.string() }), body: ImportRequest, response: { 201: Job } },
      config: {
        role: 'admin',
        action: 'cartridge.import',
        doc: {
          summary: 'Import a cartridge generation (job in queued)',

          status: 201,
        },
      },
    },
    async (request, reply) => {
      const label = request.params.label.toUpperCase();
      await refuseWhileDraining(store, 'Import');
      validInput(request);
      const job = await requestImport({
        ctx,
        label,
        body: request.body,
        requestedBy: principalName(request),
      });
      request.auditSubject = `${label} job:${job.id}`;
      reply.code(201);
      return job;
    },
  );
}
