import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from '../plugins/zod-provider.js';
import { z } from 'zod';
import {
  CreateInitiatorRequest,
  DeleteInitiatorQuery,
  PortServingRequest,
  UpdateInitiatorRequest,
  TargetsView,
} from '@vtl/api';
import type { AppContext } from '../context.js';
import { targetsBytes } from '../services/targets-view.js';
import { viewsOf } from '../services/views.js';
import { validInput } from '../plugins/validate.js';
import { cachedViewHandler } from '../plugins/view-fast-path.js';
import {
  createInitiator,
  deleteInitiator,
  setPortServing,
  updateInitiator,
} from '../services/targets-registry.js';

/** §4.1 FC targets and the initiator registry (FC WWPNs and, beyond the spec, iSCSI IQNs). */
export async function targetRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = ctx;

  r.get(
    '/api/targets',
    {
      // Answered from the view cache's bytes, serialized through this schema when they were built.
      config: {
        role: 'read-only',
        doc: { summary: 'Targets view: FC ports, LUN table, initiators (§2.3a)', response: TargetsView },
        view: targetsBytes,
      },
    },
    cachedViewHandler(() => viewsOf(ctx)),
  );

  r.post(
    '/api/targets/acls',
    {
      schema: { body: CreateInitiatorRequest, response: { 200: TargetsView } },
      config: {
        role: 'admin',
        action: 'targets.acl.create',
        doc: {
          summary: 'Register an initiator and apply it live; 400 if malformed or already registered',
        },
      },
    },
    async (request) => {
      const body = request.body;
      request.auditSubject = body.wwpn;
      return createInitiator(store, body);
    },
  );

  r.put(
    '/api/targets/acls/:wwpn',
    {
      // Validated where the handler says: the audit entry names the initiator even when refused.
      attachValidation: true,
      schema: {
        params: z.object({ wwpn: z.string() }),
        body: UpdateInitiatorRequest,
        response: { 200: TargetsView },
      },
      config: {
        role: 'admin',
        action: 'targets.acl.update',
        doc: {
          summary: 'Change alias, scope and CHAP and apply it live; 404 unknown initiator',
        },
      },
    },
    async (request) => {
      request.auditSubject = request.params.wwpn;
      validInput(request);
      return updateInitiator(store, request.params.wwpn, request.body);
    },
  );

  r.delete(
    '/api/targets/acls/:wwpn',
    {
      // Validated where the handler says: the audit entry names the initiator even when refused.
      attachValidation: true,
      schema: {
        params: z.object({ wwpn: z.string() }),
        querystring: DeleteInitiatorQuery,
        response: { 200: TargetsView },
      },
      config: {
        role: 'admin',
        action: 'targets.acl.delete',
        doc: {
          summary: 'Deregister and apply; 400 with a live session unless force=1; 404 unknown initiator',
        },
      },
    },
    async (request) => {
      request.auditSubject = request.params.wwpn;
      validInput(request);
      const query = request.query;
      return deleteInitiator(store, request.params.wwpn, query.force === '1');
    },
  );

  r.put(
    '/api/targets/ports',
    {
      schema: { body: PortServingRequest, response: { 200: TargetsView } },
      config: {
        role: 'admin',
        action: 'targets.port.serving',
        doc: {
          summary: 'Serve or stop serving one FC port (persists fc.disabled_ports)',
        },
      },
    },
    async (request) => {
      const body = request.body;
      request.auditSubject = body.wwn;
      return setPortServing(store, body.wwn, body.serving);
    },
  );
}
