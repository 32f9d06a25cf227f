import type { FastifyInstance, FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';

/**
 * The zod schemas reach Fastify through a type provider (fastify-type-provider-zod's
 * ZodTypeProvider): a route's `schema.body`, `schema.querystring` and `schema.response` are the
 * zod schemas of @vtl/api, so the handler's `request.body` is their parsed output, the answer is
 * serialized through them, and the OpenAPI document (services/openapi.ts) is made from the same
 * schemas. The compilers are ours rather than the library's for two reasons the contract fixes:
 * a failure must be the ZodError itself, so the one error handler answers the documented 400 body
 * (plugins/errors.ts, validationError); and answers are parsed (not zod-encoded), as the handlers
 * did, so schemas with one-way transforms (labels, remote prefixes) serialize.
 */
export type { ZodTypeProvider };

/** Input validation: a missing body is an empty object, as the handlers always treated it. */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema }) =>
  (data) => {
    const result = schema.safeParse(data ?? {});
    return result.success ? { value: result.data } : { error: result.error };
  };

/** Answers go out as their schema's output: unknown fields dropped, defaults filled. */
export const zodSerializerCompiler: FastifySerializerCompiler<z.ZodType> =
  ({ schema, method, url }) =>
  (data) => {
    const result = schema.safeParse(data);
    if (!result.success) {
      // A handler built an answer its own schema refuses: a server bug, logged, not the client's fault.
      throw new Error(`the answer of ${method} ${url} does not match its schema: ${result.error.message}`, {
        cause: result.error,
      });
    }
    return JSON.stringify(result.data);
  };

/** Installs the compilers on an app (the root: every route of both listeners uses them). */
export function registerZodCompilers(app: FastifyInstance): void {
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(zodSerializerCompiler);
}
