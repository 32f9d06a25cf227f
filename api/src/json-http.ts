import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

/**
 * The appliance's REST API over HTTP(S) as its Node clients call it (the `vtl` CLI and the
 * Kubernetes adapter): JSON in, JSON (or a proxy's text) out. Status handling and error wording
 * stay with each client; this is the transport they share.
 */

/** An answer as received: any status, the body parsed as JSON (or the text when it is not JSON). */
export interface JsonAnswer {
  status: number;
  // Bodies are the REST shapes of docs/api.md, read per endpoint by the callers.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** How to trust the appliance's certificate, and whether to keep connections open between calls. */
export interface JsonAgentOptions {
  insecure?: boolean;
  caFile?: string;
  keepAlive?: boolean;
}

/** The agent for calls to `server`: HTTPS with the given trust, or plain HTTP. */
export function jsonAgent(server: string, opts: JsonAgentOptions = {}): http.Agent {
  const keepAlive = opts.keepAlive ?? false;
  return new URL(server).protocol === 'https:'
    ? new https.Agent({
        keepAlive,
        rejectUnauthorized: !opts.insecure,
        ...(opts.caFile ? { ca: fs.readFileSync(opts.caFile) } : {}),
      })
    : new http.Agent({ keepAlive });
}

export interface JsonRequestOptions {
  agent: http.Agent;
  /** Sent as `Authorization: Bearer`. */
  token?: string;
  /** No answer within this long rejects with an error whose code is ETIMEDOUT (default 60 s). */
  timeoutMs?: number;
}

/**
 * One JSON request to `path` on `server`. Resolves with whatever status came back; rejects only
 * on a transport failure (the Node error, with its `code`) or the timeout.
 */
export function requestJson(
  server: string,
  method: string,
  path: string,
  body: unknown,
  opts: JsonRequestOptions,
): Promise<JsonAnswer> {
  const url = new URL(path, server);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { accept: 'application/json' };
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise<JsonAnswer>((resolve, reject) => {
    const req = lib.request(url, { method, headers, agent: opts.agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // Not JSON (a proxy's page): kept as text.
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('timeout', () =>
      req.destroy(
        Object.assign(new Error(`${method} ${url.pathname}: no answer within ${timeoutMs / 1000} s`), {
          code: 'ETIMEDOUT',
        }),
      ),
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The API's error body of an error answer, with a message even when the body is not the API's. */
export function answerError(
  method: string,
  path: string,
  answer: JsonAnswer,
): { code?: string; message: string; details?: unknown } {
  const error = (
    answer.body as { error?: { code?: string; message?: string; details?: unknown } } | undefined
  )?.error;
  const text = typeof answer.body === 'string' ? `: ${answer.body.slice(0, 200)}` : '';
  return {
    code: error?.code,
    message: error?.message ?? `${method} ${path} answered ${answer.status}${text}`,
    details: error?.details,
  };
}
