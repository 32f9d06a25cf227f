import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, RouteOptions } from 'fastify';
import fastifyStatic from '@fastify/static';

/**
 * The console's policy: its own origin only, no inline script or style, no framing. The console
 * talks to the API with fetch (connect-src 'self') and needs nothing from any other host.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Serves the web console's built files at `/` (same origin and TLS as the API). Registered before
 * the OpenAPI collector: the console is not part of the API contract. Its routes are public (the
 * files hold no data; every call the console makes carries the user's token), and every answer
 * carries the strict CSP. Files are routed one by one at start (no wildcard), so an unknown path
 * still gets the API's own 404 body.
 */
export async function consoleRoutes(app: FastifyInstance, root: string): Promise<void> {
  if (!fs.existsSync(path.join(root, 'index.html'))) {
    app.log.warn({ root }, 'web console not built: run `npm run build` to serve it at /');
    return;
  }
  await app.register(async (scope) => {
    scope.addHook('onRoute', (opts: RouteOptions) => {
      opts.config = { ...opts.config, role: 'public' };
    });
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.header('content-security-policy', CONSOLE_CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      reply.header('x-frame-options', 'DENY');
      return payload;
    });
    await scope.register(fastifyStatic, {
      root,
      prefix: '/',
      wildcard: false,
      index: 'index.html',
      // Hashed asset names change with their content: cache them for good, never the page.
      setHeaders: (res, file) => {
        const immutable = file.includes(`${path.sep}assets${path.sep}`);
        res.setHeader('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
  });
}
