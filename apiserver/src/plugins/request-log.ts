import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { observeHttpRequest } from '../services/process-metrics.js';

/**
 * A URL as logs may show it: the query string's values are replaced, since a client may put a
 * token or key there (`?token=…`) even though the API never reads credentials from it.
 * Parameter names stay so a log still says what was asked.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=')[0] ?? '';
      // A name may itself be the secret (`?vtls_…`): keep only short, plain ones.
      return /^[\w.-]{1,32}$/.test(name) ? `${name}=[redacted]` : '[redacted]';
    })
    .join('&');
  return `${url.slice(0, q)}?${query}`;
}

interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/**
 * The apiserver's logger for Fastify: its request serializer logs the URL without query values.
 * Fastify's own serializer would log `req.url` whole; serializers of the instance take precedence.
 */
export function requestLogger(logger: Logger): Logger {
  return logger.child(
    {},
    {
      serializers: {
        req: (req: LoggedRequest) => ({
          method: req.method,
          url: redactUrl(req.url ?? ''),
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        }),
      },
    },
  );
}

/** An incoming X-Request-Id is kept when it is this plain and short; else one is made. */
const CLIENT_REQUEST_ID = /^[\w.:@-]{1,128}$/;

/**
 * Request ids: a client's `X-Request-Id` (a proxy's or an SDK's, so one id follows a request
 * through every hop) when it is plain and short, else a random UUID, never a per-process
 * counter that repeats after a restart. The id is returned in `X-Request-Id` by
 * registerRequestLog, and it is each request log line's `reqId`.
 */
export function requestIdOptions() {
  return { genReqId: requestIdOf };
}

/** A request's id: its plain `X-Request-Id`, else a new UUID (requestIdOptions). */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

const READS = new Set(['GET', 'HEAD']);

/**
 * One log line per request, when it is answered, with its principal, and its duration in the
 * http_request_duration_seconds histogram (Fastify's own request logging is off: it
 * writes two lines per request, which for a polled view cost more than serving it). Writes and
 * every answer of 400 or more at info; successful reads at debug (VTL_LOG_LEVEL=debug shows
 * them), since consoles and monitors poll the views several times a second.
 */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    observeHttpRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    const quiet = READS.has(request.method) && reply.statusCode < 400;
    const log = request.log;
    if (quiet && !(log as unknown as Logger).isLevelEnabled('debug')) return;
    log[quiet ? 'debug' : 'info'](
      {
        req: request.raw,
        statusCode: reply.statusCode,
        responseTime: reply.elapsedTime,
        // Who asked: the user, `<id>:<name>` of an API key, or a service; absent when unauthenticated.
        ...(request.principal ? { principal: request.principal.name } : {}),
      },
      'request completed',
    );
  });
}
