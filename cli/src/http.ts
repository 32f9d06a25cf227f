import { answerError, jsonAgent, requestJson, type JsonAnswer } from '@vtl/api/json-http';
import { CliError } from './errors.js';

/** How to reach the appliance: its URL, how to trust its certificate, and the credential. */
export interface Connection {
  server: string;
  token?: string;
  insecure?: boolean;
  caFile?: string;
}

/** An answer of the appliance: its status and JSON body (read per endpoint by the commands). */
export type Answer = JsonAnswer;

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
export async function request(
  conn: Connection,
  method: string,
  path: string,
  body?: unknown,
  opts: { timeoutMs?: number; accept?: number[] } = {},
): Promise<Answer> {
  const agent = jsonAgent(conn.server, { insecure: conn.insecure, caFile: conn.caFile });
  let answer: JsonAnswer;
  try {
    answer = await requestJson(conn.server, method, path, body, {
      agent,
      token: conn.token,
      timeoutMs: opts.timeoutMs,
    });
  } catch (err) {
    throw transportError(conn.server, err as NodeJS.ErrnoException);
  } finally {
    agent.destroy();
  }
  if (answer.status < 400 || opts.accept?.includes(answer.status)) return answer;
  const error = answerError(method, new URL(path, conn.server).pathname, answer);
  throw new CliError(error.message, hintFor(answer.status, error.code), answer.status, error.details);
}
