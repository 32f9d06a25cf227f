import type { Logger } from 'pino';

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
