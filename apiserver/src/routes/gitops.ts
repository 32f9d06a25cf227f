import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import { conflict, keys } from '@vtl/api';
import {
  ApplyResponse,
  GITOPS_SERVICE,
  GitSourceRecord,
  PlanRequest,
  PlanResponse,
  contentRevision,
  plan,
} from '@vtl/gitops';
import type { AppContext } from '../context.js';
import { loadObserved } from '../services/gitops-observed.js';
import { applyDeclared } from '../services/gitops-apply.js';
import { gitopsSecretRoutes } from './gitops-secrets.js';
import { gitopsSourceRoutes } from './gitops-sources.js';

/** Manifests are small; a set of 1000 files of YAML still fits. */
const BODY_LIMIT = 8 * 1024 * 1024;

/** The apply body: the plan body and, from the Git poller, the commit it fetched. */
const ApplyRequest = PlanRequest.extend({
  revision: z
    .string()
    .regex(/^[\w:.-]{1,100}$/, 'revision: a commit id or a short tag')
    .optional()
    .describe('The revision recorded as applied (default: a hash of the documents)'),
});

/**
 * The sync engine's endpoints (docs/gitops.md): a dry run for people and CI, and the apply that
 * the Git poller, the Kubernetes adapter and `vtl apply` all go through, so every declared change
 * passes the same routes, rules and audit as a REST call.
 */
export async function gitopsRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/api/gitops/plan',
    {
      bodyLimit: BODY_LIMIT,
      schema: { body: PlanRequest, response: { 200: PlanResponse } },
      config: {
        role: 'read-only',
        action: 'gitops.plan',
        doc: { summary: 'Dry run: what applying these manifests would do, per object' },
      },
    },
    async (request) => {
      const body = request.body;
      request.auditSubject = body.source;
      const { steps: _steps, ...shown } = plan(body.documents, await loadObserved(ctx.store), body);
      return PlanResponse.parse(shown);
    },
  );

  r.post(
    '/api/gitops/apply',
    {
      bodyLimit: BODY_LIMIT,
      schema: { body: ApplyRequest, response: { 200: ApplyResponse } },
      config: {
        role: 'admin',
        action: 'gitops.apply',
        doc: {
          summary:
            'Apply manifests all-or-nothing as source `gitops:<source>`; 400 names each invalid object',
        },
      },
    },
    async (request) => {
      const body = request.body;
      request.auditSubject = body.source;
      // A Git source's objects change only through its poller, and the poller only applies sources.
      const git = await ctx.store.get(keys.gitopsSources.one(body.source), GitSourceRecord);
      const poller = request.principal?.kind === 'service' && request.principal.name === GITOPS_SERVICE;
      if (git && !poller)
        throw conflict(
          `Source "${body.source}" is a Git source: it changes only through its repository. Commit there, or POST /api/gitops/sources/${body.source}/webhook to poll now.`,
        );
      if (poller && !git) throw conflict(`No Git source "${body.source}" is registered.`);
      const result = await applyDeclared(app, ctx, {
        source: body.source,
        revision: body.revision ?? contentRevision(body.documents),
        documents: body.documents,
        prune: body.prune,
      });
      return ApplyResponse.parse(result);
    },
  );

  await gitopsSecretRoutes(app, ctx);
  await gitopsSourceRoutes(app, ctx);
}
