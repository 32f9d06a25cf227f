import type { FastifyInstance, FastifyRequest } from 'fastify';
import { VtlError, roleAllows } from '@vtl/api';
import type { Store } from '@vtl/store';
import { bearerToken, resolvePrincipal } from '../services/principal.js';
import type { AuditLog } from '@vtl/store';
import type { ViewCache } from '../services/view-cache.js';
import { FAIL_CLOSED_ROLE } from './route-config.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The role a route needs: what it declares, else admin, so a forgotten label fails closed. */
export const requiredRole = (request: FastifyRequest) => request.routeOptions.config.role ?? FAIL_CLOSED_ROLE;

/**
 * The one place roles are enforced (§5): before the body is even read, a request without a
 * credential gets 401 and one whose role is too low 403, so a refused request changes nothing.
 */
export function registerAuth(app: FastifyInstance, store: Store, views?: ViewCache): void {
  app.decorateRequest('principal', undefined);
  app.decorateRequest('auditSubject', undefined);
  app.decorateRequest('arrivedAt', undefined);
  app.addHook('onRequest', async (request) => {
    request.arrivedAt = performance.now();
    if (request.is404) return; // the not-found handler answers; there is nothing to protect
    const role = requiredRole(request);
    if (role === 'public') return;
    const token = bearerToken(request.headers.authorization);
    // From the watch cache when there is one, after it has caught up with this process's own
    // writes: a logout or a revoked key answered here is refused on the very next request.
    const principal = views
      ? await resolvePrincipal(store, token, await views.fresh(request.arrivedAt))
      : await resolvePrincipal(store, token);
    request.principal = principal;
    if (!roleAllows(principal.role, role))
      throw new VtlError(
        'forbidden',
        `${request.method} ${request.routeOptions.url} needs the ${role} role; ${principal.kind} "${principal.name}" has ${principal.role}. Ask an admin.`,
      );
  });
}

/**
 * Records who asked for what: every write by a known principal or a login, every refusal for
 * too low a role, and reads marked `audit`. Only names, ids and outcomes: no body, header or
 * query, so no secret can land here.
 */
export function registerAudit(app: FastifyInstance, audit: AuditLog): void {
  // onSend, not onResponse: the entry is committed before the client sees the outcome.
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.is404) return payload;
    const { config } = request.routeOptions;
    const status = reply.statusCode;
    if (READS.has(request.method) && !config.audit && status !== 403) return payload;
    const p = request.principal;
    const action = config.action ?? `${request.method} ${request.routeOptions.url}`;
    // Anyone can send requests without credentials; recording each 401 would let them push real
    // entries out of the bounded log. Failed logins are the exception worth their space.
    if (!p && status === 401 && action !== 'auth.login') return payload;
    const params = Object.values((request.params ?? {}) as Record<string, string>);
    const entry = audit
      .append({
        actor: p ? { kind: p.kind, name: p.name } : { kind: 'anonymous', name: '' },
        action,
        subject: request.auditSubject ?? params.join('/'),
        outcome: status < 400 ? 'ok' : status < 500 ? 'refused' : 'failed',
        status,
        method: request.method,
        route: request.routeOptions.url ?? '',
        request_id: String(request.id),
      })
      .catch((err: unknown) => request.log.warn({ err }, 'audit entry not recorded'));
    // A 503 usually means the store does not answer: the entry could not be committed before the
    // answer anyway, and waiting another deadline for it would double the client's wait.
    if (status !== 503) await entry;
    return payload;
  });
}
