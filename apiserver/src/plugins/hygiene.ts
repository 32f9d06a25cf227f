import type { ServerOptions } from 'node:https';
import type { FastifyInstance } from 'fastify';
import { registerBodyHygiene } from './body-hygiene.js';
import { clientErrorHandler, frameworkErrors, refuseConnect, registerUrlLimit } from './client-errors.js';
import { registerSecurityHeaders } from './security-headers.js';

/** Fastify options that route Node's and the router's own refusals to the documented error body. */
export function hygieneOptions(https: ServerOptions | undefined) {
  return { clientErrorHandler: clientErrorHandler(!!https), frameworkErrors: frameworkErrors(!!https) };
}

/** Security headers, strict JSON bodies and the URL length limit (docs/api.md "Input hygiene"). */
export function registerHygiene(app: FastifyInstance, https: ServerOptions | undefined): void {
  registerSecurityHeaders(app, { https: !!https });
  registerBodyHygiene(app);
  registerUrlLimit(app);
  refuseConnect(app.server, !!https);
}
