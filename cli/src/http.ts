import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { CliError } from './errors.js';

/** How to reach the appliance: its URL, how to trust its certificate, and the credential. */
export interface Connection {
  server: string;
  token?: string;
  insecure?: boolean;
  caFile?: string;
}

export interface Answer {
  status: number;
  // Response bodies are read per endpoint by the commands.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** TLS errors that mean "this certificate is not trusted", as Node names them. */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** What to do next after an error status, by the API's error code or HTTP status. */
function hintFor(status: number, code: string | undefined): string | undefined {
  if (status === 401) return 'Your session expired or the credential is not accepted: run `vtl login` again.';
  if (status === 403)
    return 'This needs a more privileged role: log in as an admin user or with an admin API key.';
  if (status === 429) return 'Too many failed logins: wait for the time the message names, then try again.';
  if (status === 503)
    return 'A component of the appliance is down: try again shortly, or check `GET /healthz`.';
  if (code === 'timeout')
    return 'The operation is still running on the appliance: do not retry; watch its events.';
  if (status === 404 && code === 'not_found')
    return 'Check the name, or that the appliance runs a version with this endpoint.';
  return undefined;
}

/** Turns a transport failure into what the user can act on. */
function transportError(server: string, err: NodeJS.ErrnoException): CliError {
  if (err.code && UNTRUSTED.has(err.code))
    return new CliError(
      `The certificate of ${server} is not trusted (${err.code}).`,
      'Pass --ca FILE with the CA that signed it to `vtl login`, or --insecure to skip verification (the appliance makes a self-signed certificate unless you install one).',
    );
  if (err.code === 'ECONNREFUSED' || err.code === 'ENOTFOUND' || err.code === 'EHOSTUNREACH')
    return new CliError(
      `Cannot reach ${server} (${err.code}).`,
      'Check the URL given to `vtl login --server` and that the appliance is running.',
    );
  return new CliError(`Request to ${server} failed: ${err.message}`, 'Check the network and try again.');
}

/**
 * One JSON request to the appliance. Error answers (4xx/5xx) become a CliError with the API's
 * message and a hint; `accept` lists statuses returned as answers instead (e.g. a plan's 400).
 */
export function request(
  conn: Connection,
  method: string,
  path: string,
  body?: unknown,
  opts: { timeoutMs?: number; accept?: number[] } = {},
): Promise<Answer> {
  const url = new URL(path, conn.server);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { accept: 'application/json' };
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  if (conn.token) headers.authorization = `Bearer ${conn.token}`;
  const tls =
    url.protocol === 'https:'
      ? {
          rejectUnauthorized: !conn.insecure,
          ...(conn.caFile ? { ca: fs.readFileSync(conn.caFile) } : {}),
        }
      : {};
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise<Answer>((resolve, reject) => {
    const req = lib.request(url, { method, headers, ...tls, timeout: opts.timeoutMs ?? 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => reject(transportError(conn.server, err)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // Not JSON (a proxy's page): reported as text below.
        }
        const status = res.statusCode ?? 0;
        if (status < 400 || opts.accept?.includes(status)) return resolve({ status, body: parsed });
        const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } })?.error;
        const message =
          error?.message ?? `${method} ${url.pathname} answered ${status}: ${text.slice(0, 200)}`;
        reject(new CliError(message, hintFor(status, error?.code), status, error?.details));
      });
    });
    req.on('timeout', () =>
      req.destroy(
        Object.assign(new Error(`no answer within ${(opts.timeoutMs ?? 60_000) / 1000} s`), {
          code: 'ETIMEDOUT',
        }),
      ),
    );
    req.on('error', (err) => reject(err instanceof CliError ? err : transportError(conn.server, err)));
    req.end(payload);
  });
}
