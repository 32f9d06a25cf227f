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
 * onSend runs for error and 404 replies too.
 */
export function registerSecurityHeaders(app: FastifyInstance, opts: { https: boolean }): void {
  const headers = securityHeaders(opts.https);
  app.addHook('onSend', async (request, reply, payload) => {
    for (const [name, value] of Object.entries(headers)) void reply.header(name, value);
    if (request.url.startsWith('/api/') || request.url === '/api')
      void reply.header('cache-control', 'no-store');
    return payload;
  });
}
