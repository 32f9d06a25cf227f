import type { FastifyError, FastifyInstance } from 'fastify';
import { VtlError } from '@vtl/api';
import { ZodError } from 'zod';
import { fromFastifyError } from './client-errors.js';
import { redactUrl } from './request-log.js';

/** Turns a zod failure into the one error body: the first issue names the field and the rule. */
export function validationError(err: ZodError): VtlError {
  const issues = err.issues.map((i) => {
    const field = i.path.join('.');
    if (i.code === 'unrecognized_keys') return `unknown field(s): ${i.keys.join(', ')}`;
    return field && !i.message.startsWith(field) ? `${field}: ${i.message}` : i.message;
  });
  return new VtlError('validation_failed', issues.join('; '), { issues });
}

/** The one error handler: stable codes to statuses; 5xx bodies leak no internals. */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    let vtl: VtlError;
    if (error instanceof VtlError) vtl = error;
    else if (error instanceof ZodError) vtl = validationError(error);
    else if ('statusCode' in error && typeof error.statusCode === 'number' && error.statusCode < 500) {
      // Fastify's own refusals: unparsable JSON, wrong content type, body too large.
      vtl = fromFastifyError(error);
    } else {
      request.log.error({ err: error }, 'request failed');
      vtl = new VtlError(
        'internal',
        'Internal error; the appliance log has the details (request id ' + request.id + ').',
      );
    }
    if (vtl.status >= 500)
      request.log.error({ code: vtl.code, msg: vtl.message, details: vtl.details }, 'request failed');
    const retryAfter = vtl.details?.retry_after_sec;
    if (typeof retryAfter === 'number') void reply.header('retry-after', String(retryAfter));
    return reply.status(vtl.status).send(vtl.toBody());
  });
  app.setNotFoundHandler((request, reply) => {
    const err = new VtlError(
      'not_found',
      `No route ${request.method} ${redactUrl(request.url)}; see docs/api.md for the endpoints.`,
    );
    return reply.status(404).send(err.toBody());
  });
}
