import { sentNoEarlierThan } from '../plugins/arrival.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { Job, JobListQuery } from '@vtl/api';
import type { AppContext } from '../context.js';
import { idParam, parse } from '../plugins/validate.js';
import { refuseWhileDraining } from '../services/guards.js';
import { cancelJob, getJob, listJobs, retryJob } from '../services/jobs.js';
import { viewsOf } from '../services/views.js';

/** Jobs (docs/api.md "Jobs"): the spec leaves listing, inspecting and retrying open. */
export async function jobRoutes(app: FastifyInstance, ctx: AppContext) {
  const { store, journal } = ctx;
  type Id = { Params: { id: string } };

  app.get(
    '/api/jobs',
    {
      config: {
        role: 'read-only',
        doc: { summary: 'Jobs, newest first', query: JobListQuery, response: z.array(Job) },
      },
    },
    async (request) => {
      const query = parse(JobListQuery, request.query);
      return listJobs((await viewsOf(ctx).fresh(request.arrivedAt)).snapshot().jobs, query);
    },
  );

  app.get<Id>(
    '/api/jobs/:id',
    { config: { role: 'read-only', doc: { summary: 'One job', response: Job } } },
    async (request) => {
      const id = idParam(request.params.id, 'job');
      return getJob((await viewsOf(ctx).fresh(request.arrivedAt)).snapshot().jobs, id);
    },
  );

  app.post<Id>(
    '/api/jobs/:id/retry',
    {
      config: {
        role: 'admin',
        action: 'job.retry',
        doc: { summary: 'Retry a failed or interrupted job', response: Job },
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

  app.post<Id>(
    '/api/jobs/:id/cancel',
    {
      config: {
        role: 'admin',
        action: 'job.cancel',
        doc: { summary: 'Cancel a job that has not started', response: Job },
      },
    },
    async (request) => cancelJob(store, journal, idParam(request.params.id, 'job')),
  );
}
