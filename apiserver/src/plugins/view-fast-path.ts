import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Logger } from 'pino';
import { VtlError, roleAllows, type Role } from '@vtl/api';
import { acceptsGzip, gzipView } from '../services/gzip-view.js';
import { bearerToken, cachedPrincipal } from '../services/principal.js';
import type { ViewCache } from '../services/view-cache.js';
import { markAnswered } from './arrival.js';
import { requestIdOf } from './request-log.js';
import { requestDurations } from '../services/process-metrics.js';
import type { DurationSeries } from '../services/request-durations.js';
import { FAIL_CLOSED_ROLE, type CachedView } from './route-config.js';
import { securityHeaders } from './security-headers.js';
import { writeBody } from './view-body.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers the fast path gave, per app (tests check that it, not Fastify, answered). */
const served = new WeakMap<FastifyInstance, { count: number }>();
export const fastPathAnswers = (app: FastifyInstance): number => served.get(app)?.count ?? 0;

interface FastView {
  role: Role;
  view: CachedView;
  /** Its http_request_duration_seconds series for 200 (looked up once, not per request). */
  durations: DurationSeries;
}

/**
 * A cached view's answer for a request's Accept-Encoding: its chunks as kept, or gzipped for a
 * client that takes gzip (gzip-view.ts: the kept part deflated once per change). Either way
 * the answer varies with Accept-Encoding and says so.
 */
export function viewAnswer(
  bytes: Buffer | readonly Buffer[],
  acceptEncoding: string | string[] | undefined,
): { chunks: readonly Buffer[]; headers: [string, string][] } {
  const chunks = Buffer.isBuffer(bytes) ? [bytes] : bytes;
  if (!acceptsGzip(acceptEncoding)) return { chunks, headers: [VARY] };
  return { chunks: gzipView(chunks), headers: [VARY, GZIP] };
}
const VARY: [string, string] = ['vary', 'accept-encoding'];
const GZIP: [string, string] = ['content-encoding', 'gzip'];

/** The handler of a route with `config.view`: once the cache is fresh for the request, its bytes. */
export function cachedViewHandler(views: () => ViewCache) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const fresh = await views().fresh(request.arrivedAt);
    const { chunks, headers } = viewAnswer(
      request.routeOptions.config.view!(fresh),
      request.headers['accept-encoding'],
    );
    for (const [name, value] of headers) reply.header(name, value);
    // Fastify's reply takes one buffer.
    return reply.type(JSON_TYPE).send(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  };
}

/**
 * The cached read views (GET /api/status, /api/library, /api/targets, /api/cartridges, ...)
 * answered before Fastify sees the request, when everything the answer depends on is already at
 * hand: a bearer token the view cache resolves to a principal with the route's role, and a view
 * cache that is fresh for the request (ViewCache.freshNow: the same revision read and
 * read-your-writes condition fresh() waits for). Polled views are the hot path of consoles and
 * monitors; through Fastify's routing, hooks, child logger and reply they cost some 2.5 × what
 * sending the bytes costs (issue 13's targets). Anything else (no or unknown credential, too low
 * a role, another method or path, debug request logging) goes to Fastify unchanged, so
 * refusals, their bodies and the audit of 403s have one path. A cache not yet known fresh is
 * waited for as fresh() does; its 503 is answered here (refuse), as the error handler would.
 *
 * The answer carries what Fastify's would: the JSON content type, the security headers,
 * `Cache-Control: no-store` (security-headers.ts), `Vary: Accept-Encoding` and, for a client that
 * takes gzip, `Content-Encoding: gzip` (viewAnswer); the connection is marked answered for arrival.ts.
 */
export function registerViewFastPath(
  app: FastifyInstance,
  views: () => ViewCache | undefined,
  https: boolean,
): void {
  // Fastify adds its request listener when it creates the server, before any plugin runs.
  const server = app.server;
  const [fastify, ...others] = server.listeners('request') as ((
    req: IncomingMessage,
    res: ServerResponse,
  ) => void)[];
  if (!fastify || others.length > 0) return; // not the server shape this expects: Fastify alone
  const routes = new Map<string, FastView>();
  const stats = { count: 0 };
  served.set(app, stats);
  app.addHook('onRoute', (opts: RouteOptions) => {
    const view = opts.config?.view;
    if (view && opts.method === 'GET')
      routes.set(opts.url, {
        role: opts.config?.role ?? FAIL_CLOSED_ROLE,
        view,
        durations: requestDurations.series('GET', opts.url, 200),
      });
  });
  const fixed = Object.entries({
    ...securityHeaders(https),
    'cache-control': 'no-store',
    'content-type': JSON_TYPE,
  });
  const logger = app.log as unknown as Logger;
  /**
   * The answer's header lines, flat, for a plain and a gzipped body: built once, the two values
   * that differ per request (length, request id) written in before each writeHead, which reads
   * them there and keeps nothing of the array.
   */
  const headerLines = (encoding: [string, string][]) => {
    const lines = [...fixed, ...encoding, ['content-length', ''], ['x-request-id', '']].flat();
    return { lines, length: lines.length - 3, id: lines.length - 1 };
  };
  const plainLines = headerLines([VARY]);
  const gzipLines = headerLines([VARY, GZIP]);

  /** The view's bytes for a principal the cache accepts with the route's role; false: ask Fastify. */
  const answer = (
    req: IncomingMessage,
    res: ServerResponse,
    route: FastView,
    cache: ViewCache,
    token: string,
    since: number,
  ) => {
    const principal = cachedPrincipal(token, cache);
    if (!principal || !roleAllows(principal.role, route.role)) return false;
    let body: Buffer | readonly Buffer[];
    try {
      body = route.view(cache);
    } catch {
      return false; // Fastify's path fails the same way and answers the error body
    }
    const gzip = acceptsGzip(req.headers['accept-encoding']);
    const chunks = gzip ? gzipView(Buffer.isBuffer(body) ? [body] : body) : body;
    const header = gzip ? gzipLines : plainLines;
    let length = 0;
    if (Buffer.isBuffer(chunks)) length = chunks.length;
    else for (const c of chunks) length += c.length;
    header.lines[header.length] = String(length);
    header.lines[header.id] = requestIdOf(req);
    res.writeHead(200, header.lines);
    writeBody(res, Buffer.isBuffer(chunks) ? [chunks] : chunks);
    markAnswered(app, req.socket);
    route.durations.observe((performance.now() - since) / 1000);
    stats.count++;
    return true;
  };

  /**
   * fresh()'s refusal (the store does not answer, the cache lags), answered as errors.ts would:
   * handing it to Fastify instead would wait out the store deadline a second time.
   */
  const refuse = (req: IncomingMessage, res: ServerResponse, err: VtlError) => {
    const reqId = requestIdOf(req);
    logger.error({ reqId, code: err.code, msg: err.message, details: err.details }, 'request failed');
    const retryAfter = err.details?.retry_after_sec;
    const body = JSON.stringify(err.toBody());
    res.writeHead(
      err.status,
      [
        ...fixed,
        ['content-length', String(Buffer.byteLength(body))],
        ['x-request-id', reqId],
        ...(typeof retryAfter === 'number' ? [['retry-after', String(retryAfter)]] : []),
      ].flat(),
    );
    res.end(body);
    markAnswered(app, req.socket);
    logger.info(
      { reqId, req: { method: req.method, url: req.url }, statusCode: err.status },
      'request completed',
    );
  };

  /** Whether the fast path answers (or will answer) this request. */
  const serve = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'GET') return false;
    const route = routes.get(req.url ?? '');
    const cache = route && views();
    if (!route || !cache || logger.isLevelEnabled('debug')) return false;
    const since = performance.now();
    let token: string | undefined;
    try {
      token = bearerToken(req.headers.authorization);
    } catch {
      return false; // a malformed header: Fastify's path answers the 401
    }
    if (!token) return false;
    if (cache.freshNow(since)) return answer(req, res, route, cache, token, since);
    // The window's revision read is still out: wait for it as fresh() does, then the same.
    cache.fresh(since).then(
      () => answer(req, res, route, cache, token, since) || fastify(req, res),
      (err: unknown) => (err instanceof VtlError ? refuse(req, res, err) : fastify(req, res)),
    );
    return true;
  };

  // In front of Fastify's request listener.
  server.removeListener('request', fastify);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!serve(req, res)) fastify(req, res);
  });
}
