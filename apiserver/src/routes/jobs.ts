import { sentNoEarlierThan } from '../plugins/arrival.js';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import { Job, JobListQuery } from '@vtl/api';
import type { AppContext } from '../context.js';
import { idParam } from '../plugins/validate.js';
import { refuseWhileDraining } from '../services/guards.js';
import { cancelJob, retryJob } from '@vtl/domain';
import { getJob, listJobs } from '../services/jobs.js';
import { viewsOf } from '../services/views.js';

/** Jobs (docs/api.md "Jobs"): the spec leaves listing, inspecting and retrying open. */
export async function jobRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store, journal } = ctx;

  r.get(
    '/api/jobs',
    {
      schema: { querystring: JobListQuery, response: { 200: z.array(Job) } },
      config: {
        role: 'read-only',
        doc: { summary: 'Jobs, newest first' },
      },
    },
    async (request) => {
      const query = request.query;
      return listJobs((await viewsOf(ctx).fresh(request.arrivedAt)).snapshot().jobs, query);
    },
  );

  r.get(
    '/api/jobs/:id',
    {
      schema: { params: z.object({ id: z.string() }), response: { 200: Job } },
      config: { role: 'read-only', doc: { summary: 'One job' } },
    },
    async (request) => {
      const id = idParam(request.params.id, 'job');
      return getJob((await viewsOf(ctx).fresh(request.arrivedAt)).snapshot().jobs, id);
    },
  );

  r.post(
    '/api/jobs/:id/retry',
    {
      schema: { params: z.object({ id: z.string() }), response: { 200: Job } },
      config: {
        role: 'admin',
        action: 'job.retry',
        doc: { summary: 'Retry a failed or interrupted job' },
      },
    },
    async (request, reply) => {
      // A retry refers to the job as its sender saw it: a change after the request was sent
      // (another retry of the same burst ran, and its attempt failed again) refuses it.
      const sentAt = sentNoEarlierThan(app, request, reply.elapsedTime);
      await refuseWhileDraining(store, 'Retrying a job');
      return retryJob(store, journal, idParam(request.params.id, 'job'), sentAt);
    },
  );

  r.post(
    '/api/jobs/:id/cancel',
    {
      schema: { params: z.object({ id: z.string() }), response: { 200: Job } },
      config: {
        role: 'admin',
        action: 'job.cancel',
        doc: { summary: 'Cancel a job that has not started' },
      },
    },
    async (request) => cancelJob(store, journal, idParam(request.params.id, 'job')),
  );
}
