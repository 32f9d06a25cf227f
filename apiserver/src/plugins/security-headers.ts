import type { FastifyInstance } from 'fastify';

/** Two years, subdomains included: the appliance is only ever meant to be reached over HTTPS. */
export const HSTS = 'max-age=63072000; includeSubDomains';

/** Headers of every response, including the ones written on the raw socket (client-errors.ts). */
export function securityHeaders(https: boolean): Record<string, string> {
  return {
    ...(https ? { 'strict-transport-security': HSTS } : {}),
    'x-content-type-options': 'nosniff',
  };
}

/**
 * HSTS (HTTPS listener only: browsers ignore it over HTTP) and nosniff on every response, and
 * `Cache-Control: no-store` on every /api response: they carry tokens (login), keys (API key
 * creation) and the appliance's state, none of which a browser or proxy cache should keep.
 * Set on the raw response at onRequest, so error, 404 and hijacked (event stream) responses
 * carry them too; a route may still set its own Cache-Control.
 */
export function registerSecurityHeaders(app: FastifyInstance, opts: { https: boolean }): void {
  const headers = Object.entries(securityHeaders(opts.https));
  app.addHook('onRequest', async (request, reply) => {
    for (const [name, value] of headers) reply.raw.setHeader(name, value);
    if (request.url === '/api' || request.url.startsWith('/api/') || request.url.startsWith('/api?'))
      reply.raw.setHeader('cache-control', 'no-store');
  });
}
