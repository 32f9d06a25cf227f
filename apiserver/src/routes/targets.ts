import type { FastifyInstance } from 'fastify';
import {
  CreateInitiatorRequest,
  DeleteInitiatorQuery,
  PortServingRequest,
  UpdateInitiatorRequest,
  TargetsView,
} from '@vtl/api';
import type { AppContext } from '../context.js';
import { targetsView } from '../services/targets-view.js';
import { viewsOf } from '../services/views.js';
import { parse } from '../plugins/validate.js';
import {
  createInitiator,
  deleteInitiator,
  setPortServing,
  updateInitiator,
} from '../services/targets-registry.js';

type WwpnParams = { Params: { wwpn: string } };

/** §4.1 FC targets and the initiator registry (FC WWPNs and, beyond the spec, iSCSI IQNs). */
export async function targetRoutes(app: FastifyInstance, ctx: AppContext) {
  const { store } = ctx;

  app.get(
    '/api/targets',
    {
      config: {
        role: 'read-only',
        doc: { summary: 'Targets view: FC ports, LUN table, initiators (§2.3a)', response: TargetsView },
      },
    },
    async (request, reply) => {
      const views = await viewsOf(ctx).fresh(request.arrivedAt);
      const body = views.memo('targets', () => {
        const s = views.snapshot();
        const ids = s.libraries.filter((l) => !l.deleting).map((l) => l.id);
        return JSON.stringify(TargetsView.parse(targetsView(views.initiators(), s.nodes, ids)));
      });
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );

  app.post(
    '/api/targets/acls',
    {
      config: {
        role: 'admin',
        action: 'targets.acl.create',
        doc: {
          summary: 'Register an initiator and apply it live; 400 if malformed or already registered',
          body: CreateInitiatorRequest,
          response: TargetsView,
        },
      },
    },
    async (request) => {
      const body = parse(CreateInitiatorRequest, request.body);
      request.auditSubject = body.wwpn;
      return createInitiator(store, body);
    },
  );

  app.put<WwpnParams>(
    '/api/targets/acls/:wwpn',
    {
      config: {
        role: 'admin',
        action: 'targets.acl.update',
        doc: {
          summary: 'Change alias, scope and CHAP and apply it live; 404 unknown initiator',
          body: UpdateInitiatorRequest,
          response: TargetsView,
        },
      },
    },
    async (request) => {
      request.auditSubject = request.params.wwpn;
      return updateInitiator(store, request.params.wwpn, parse(UpdateInitiatorRequest, request.body));
    },
  );

  app.delete<WwpnParams>(
    '/api/targets/acls/:wwpn',
    {
      config: {
        role: 'admin',
        action: 'targets.acl.delete',
        doc: {
          summary: 'Deregister and apply; 400 with a live session unless force=1; 404 unknown initiator',
          query: DeleteInitiatorQuery,
          response: TargetsView,
        },
      },
    },
    async (request) => {
      request.auditSubject = request.params.wwpn;
      const query = parse(DeleteInitiatorQuery, request.query);
      return deleteInitiator(store, request.params.wwpn, query.force === '1');
    },
  );

  app.put(
    '/api/targets/ports',
    {
      config: {
        role: 'admin',
        action: 'targets.port.serving',
        doc: {
          summary: 'Serve or stop serving one FC port (persists fc.disabled_ports)',
          body: PortServingRequest,
          response: TargetsView,
        },
      },
    },
    async (request) => {
      const body = parse(PortServingRequest, request.body);
      request.auditSubject = body.wwn;
      return setPortServing(store, body.wwn, body.serving);
    },
  );
}
