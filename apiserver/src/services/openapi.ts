import type { FastifyInstance, RouteOptions } from 'fastify';
import { ErrorBody, type Role } from '@vtl/api';
import { z } from 'zod';
import { FAIL_CLOSED_ROLE, type RouteDoc } from '../plugins/route-config.js';

interface CollectedRoute {
  method: string;
  url: string;
  role: Role;
  doc: RouteDoc | undefined;
  /** The zod schemas Fastify validates and serializes with (plugins/zod-provider.ts). */
  body: z.ZodType | undefined;
  query: z.ZodType | undefined;
  response: z.ZodType | undefined;
}

/** Refusals every route may answer with, besides its own 2xx. */
const ERRORS: Record<string, string> = {
  '400': 'Refused: validation failed or the state does not allow it (message says what to do)',
  '401': 'No credentials, or unknown, expired or ignored ones',
  '403': "The credential's role is too low",
  '404': 'No such resource',
  '409': 'Conflict, or refused while a graceful restart drains',
  '500': 'The operation failed; details carry what the spec requires',
  '503': 'A component the request needs is down',
  '504': 'The operation still runs; do not retry, watch the events',
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  // OpenAPI 3.1 schema objects are JSON Schema 2020-12; the dialect is stated once, not per schema.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  });
  return rest;
}

/** The zod schemas of a route as Fastify holds them (plugins/zod-provider.ts). */
interface RouteSchemas {
  body?: z.ZodType;
  querystring?: z.ZodType;
  response?: Record<number | string, z.ZodType>;
}

/** Collects every route as it is registered: the document can never miss one. */
export function collectRoutes(app: FastifyInstance): CollectedRoute[] {
  const routes: CollectedRoute[] = [];
  app.addHook('onRoute', (opts: RouteOptions) => {
    const methods = Array.isArray(opts.method) ? opts.method : [opts.method];
    const doc = opts.config?.doc;
    const schema = opts.schema as RouteSchemas | undefined;
    // A route's schemas are its Fastify ones; `doc` may carry the answer's schema of a route
    // that sends bytes serialized ahead (the view cache's).
    const body = schema?.body;
    const query = schema?.querystring;
    const response = schema?.response?.[doc?.status ?? 200] ?? doc?.response;
    for (const method of methods) {
      if (method === 'HEAD') continue;
      routes.push({
        method,
        url: opts.url,
        role: opts.config?.role ?? FAIL_CLOSED_ROLE,
        doc,
        body,
        query,
        response,
      });
    }
  });
  return routes;
}

function operation(route: CollectedRoute) {
  const doc = route.doc;
  const success = String(doc?.status ?? 200);
  const content = doc?.produces
    ? { [doc.produces]: { schema: { type: 'string' } } }
    : route.response
      ? { 'application/json': { schema: jsonSchema(route.response, 'output') } }
      : undefined;
  const params = [...route.url.matchAll(/:(\w+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const query = route.query ? jsonSchema(route.query, 'input') : undefined;
  const queryParams = Object.entries((query?.properties ?? {}) as Record<string, object>).map(
    ([name, schema]) => ({
      name,
      in: 'query',
      required: ((query?.required as string[] | undefined) ?? []).includes(name),
      schema,
    }),
  );
  const errors = Object.fromEntries(
    Object.entries(ERRORS).map(([status, description]) => [
      status,
      {
        description,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
      },
    ]),
  );
  return {
    summary: doc?.summary ?? `${route.method} ${route.url}`,
    'x-vtl-role': route.role,
    security: route.role === 'public' ? [] : [{ bearer: [] }],
    parameters: [...params, ...queryParams],
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
          },
        }
      : {}),
    responses: {
      [success]: { description: 'Success', ...(content ? { content } : {}) },
      ...errors,
    },
  };
}

/** The OpenAPI 3.1 document of the control API, from the routes and their zod schemas. */
export function openApiDocument(routes: CollectedRoute[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of [...routes].sort((a, b) => a.url.localeCompare(b.url))) {
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'VTL control API',
      version,
      description:
        'Roles: x-vtl-role of each operation (public, read-only, admin). Send Authorization: Bearer <session token or API key>. Every 4xx/5xx carries ErrorBody.',
    },
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { ErrorBody: jsonSchema(ErrorBody, 'output') },
    },
  };
}
