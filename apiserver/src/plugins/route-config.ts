import type { Role } from '@vtl/api';
import type { z } from 'zod';
import type { Principal } from '../services/principal.js';
import type { ViewCache } from '../services/view-cache.js';

/** A read view's answer as bytes, from the view cache (kept serialized between changes). */
export type CachedView = (views: ViewCache) => Buffer | readonly Buffer[];

/**
 * What the OpenAPI document says of a route beyond its Fastify schemas (`schema.body`,
 * `schema.querystring`, `schema.response`: the zod schemas of plugins/zod-provider.ts).
 */
export interface RouteDoc {
  summary: string;
  /**
   * For a route that answers bytes serialized ahead (the view cache's routes): its answer's
   * schema, documented as if it were Fastify's. Inputs always go through `schema`.
   */
  response?: z.ZodType;
  /** Success status when not 200. */
  status?: number;
  /** Content type of the success response when not JSON. */
  produces?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Endpoint role as §4 labels it; a route without one is admin-only (fail closed). */
    role?: Role;
    /** Audit action name; writes are audited as `<METHOD> <route>` without one. */
    action?: string;
    /** Audit this read too (a read that hands out something sensitive). */
    audit?: boolean;
    doc?: RouteDoc;
    /**
     * A GET answered with these bytes once the view cache is fresh for the request: the route
     * is then also served by the fast path (plugins/view-fast-path.ts).
     */
    view?: CachedView;
  }
  interface FastifyRequest {
    principal?: Principal;
    /** performance.now() when the credential check began: reads of the view cache since then are fresh for it. */
    arrivedAt?: number;
    /** What the request is about, for the audit log, when the path does not say it. */
    auditSubject?: string;
  }
}

export const FAIL_CLOSED_ROLE: Role = 'admin';
