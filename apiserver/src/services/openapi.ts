import type { FastifyInstance, RouteOptions } from 'fastify';
import * as api from '@vtl/api';
import { ErrorBody, type Role } from '@vtl/api';
import { z } from 'zod';
import { COMPONENT_NAMES, EXAMPLES, TAGS, operationId, tagOf } from './openapi-names.js';
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

/**
 * Names the exported zod schemas of @vtl/api (Library, Cartridge, Job, ...) once, by their export
 * names: zod then puts each in `$defs` and refers to it wherever a route's schema uses it, and
 * the document lifts them into named component schemas an SDK generator turns into types.
 */
const namedSchemas = new Map<string, z.ZodType>();
function nameApiSchemas(): void {
  if (namedSchemas.size > 0) return;
  for (const [name, value] of Object.entries(api)) {
    if (!(value instanceof z.ZodType) || !/^[A-Z]/.test(name)) continue;
    const meta = z.globalRegistry.get(value);
    if (meta?.id) continue; // exported under two names: the first names it
    const renamed = COMPONENT_NAMES[name];
    const id = renamed && !(renamed in api) ? renamed : name;
    z.globalRegistry.add(value, { ...meta, id });
    namedSchemas.set(id, value);
  }
}

const convert = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;

/** A named schema's definition as an answer has it (what its component holds). */
const outputForms = new Map<string, string>();
function outputForm(id: string): string | undefined {
  const schema = namedSchemas.get(id);
  if (!schema) return undefined;
  if (!outputForms.has(id))
    outputForms.set(id, JSON.stringify((convert(schema, 'output').$defs as Record<string, unknown>)[id]));
  return outputForms.get(id);
}

/** The component schemas a document refers to, by name (an input variant as `<Name>Input`). */
type Components = Record<string, unknown>;

function jsonSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  components: Components,
): Record<string, unknown> {
  // OpenAPI 3.1 schema objects are JSON Schema 2020-12; the dialect is stated once, not per schema.
  const { $schema: _dialect, $defs, ...rest } = convert(schema, io);
  const defs = new Map(Object.entries(($defs ?? {}) as Record<string, unknown>));
  // A request body's schema can differ from the answer's (defaults make fields optional): then
  // it stays inline where it is used (generators such as openapi-typescript read a component's
  // defaults as always present, which holds for answers only); the same schema is a component.
  const inline = new Set(
    [...defs]
      .filter(([id, def]) => io === 'input' && JSON.stringify(def) !== outputForm(id))
      .map(([id]) => id),
  );
  const relink = (node: unknown, seen: string[] = []): unknown => {
    if (Array.isArray(node)) return node.map((n) => relink(n, seen));
    if (!node || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/$defs/')) {
      const id = ref.slice('#/$defs/'.length);
      if (!inline.has(id) || seen.includes(id)) return { $ref: `#/components/schemas/${id}` };
      return relink(defs.get(id), [...seen, id]);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, relink(v, seen)]));
  };
  for (const [id, def] of defs) if (!inline.has(id)) components[id] ??= relink(def);
  return relink(rest) as Record<string, unknown>;
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

/**
 * A query string's schema as its parameters take it: an object's properties, so a named query
 * schema (JobListQuery) is looked up, not referred to, and is no component of its own.
 */
function queryParameters(schema: Record<string, unknown>, components: Components): Record<string, unknown> {
  const ref = typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : undefined;
  if (!ref) return schema;
  const named = components[ref] as Record<string, unknown>;
  delete components[ref];
  return named;
}

function operation(route: CollectedRoute, components: Components) {
  const doc = route.doc;
  const success = String(doc?.status ?? 200);
  const content = doc?.produces
    ? { [doc.produces]: { schema: { type: 'string' } } }
    : route.response
      ? { 'application/json': { schema: jsonSchema(route.response, 'output', components) } }
      : undefined;
  const params = [...route.url.matchAll(/:(\w+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const query = route.query
    ? queryParameters(jsonSchema(route.query, 'input', components), components)
    : undefined;
  const queryParams = Object.entries((query?.properties ?? {}) as Record<string, object>).map(
    ([name, schema]) => ({
      name,
      in: 'query',
      required: ((query?.required as string[] | undefined) ?? []).includes(name),
      ...('description' in schema ? { description: schema.description } : {}),
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
  const example = EXAMPLES[`${route.method} ${route.url}`];
  return {
    operationId: operationId(route.method, route.url),
    tags: [tagOf(route.url)],
    summary: doc?.summary ?? `${route.method} ${route.url}`,
    description: `${doc?.summary ?? `${route.method} ${route.url}`}. Role: ${route.role}.`,
    'x-vtl-role': route.role,
    security: route.role === 'public' ? [] : [{ bearer: [] }],
    parameters: [...params, ...queryParams],
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: jsonSchema(route.body, 'input', components),
                ...(example ? { examples: { example: { value: example } } } : {}),
              },
            },
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
  nameApiSchemas();
  const components: Components = {};
  const errorBody = jsonSchema(ErrorBody, 'output', components);
  const paths: Record<string, Record<string, unknown>> = {};
  const used = new Set<string>();
  for (const route of [...routes].sort((a, b) => a.url.localeCompare(b.url))) {
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, components);
    used.add(tagOf(route.url));
  }
  const ids = Object.values(paths).flatMap((p) =>
    Object.values(p).map((o) => (o as { operationId: string }).operationId),
  );
  const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (repeated.length > 0) throw new Error(`OpenAPI operationIds repeat: ${repeated.join(', ')}`);
  return {
    openapi: '3.1.0',
    info: {
      title: 'VTL control API',
      version,
      description:
        'Roles: x-vtl-role of each operation (public, read-only, admin). Send Authorization: Bearer <session token or API key>. Every 4xx/5xx carries ErrorBody.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-VTL' },
    },
    servers: [
      { url: '/', description: 'The appliance that served this document' },
      {
        url: 'https://{host}:{port}',
        description: 'An appliance by address',
        variables: { host: { default: 'localhost' }, port: { default: '8443' } },
      },
    ],
    tags: [...used].sort().map((name) => ({ name, description: TAGS[name] ?? `The ${name} routes.` })),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { ...components, ErrorBody: errorBody.$ref ? components.ErrorBody : errorBody },
    },
  };
}
