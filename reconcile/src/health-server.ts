import http from 'node:http';
import type { Logger } from 'pino';

/** What readiness asks of the store: that etcd answers (Store.ping never throws). */
export interface Pingable {
  ping(timeoutMs?: number): Promise<boolean>;
}

/** How long /readyz waits for etcd: a probe must answer well inside the kubelet's timeout. */
const READY_PING_MS = 2_000;

/** Where the probes listen: VTL_HEALTH_PORT (0: nowhere) and VTL_HEALTH_BIND. */
export interface HealthSettings {
  port: number;
  bind: string;
}

/** The probe settings from a process's environment: called by its config.ts, like the store's. */
export function healthSettingsFromEnv(env: NodeJS.ProcessEnv): HealthSettings {
  const port = Number(env.VTL_HEALTH_PORT ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`VTL_HEALTH_PORT must be a port number (or 0 for none), got "${env.VTL_HEALTH_PORT}"`);
  return { port, bind: env.VTL_HEALTH_BIND ?? '0.0.0.0' };
}

/**
 * VTL_HEALTH_PORT: the probes of a process that serves no HTTP otherwise (controller,
 * nodeagent; charts/vtl points the kubelet here). GET /healthz answers 200 while the event loop
 * turns (liveness: a restart would not bring etcd back, so it does not ask etcd); GET /readyz
 * answers 200 when etcd answers too, else 503. Port 0: nothing listens. The server does not
 * keep the process alive, so the process's own shutdown needs no step for it.
 */
export async function serveHealth(
  store: Pingable,
  logger: Logger,
  settings: HealthSettings,
): Promise<http.Server | undefined> {
  const { port, bind } = settings;
  if (port === 0) return undefined;
  const server = http.createServer((req, res) => {
    const reply = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET') return reply(405, { error: 'method_not_allowed' });
    if (req.url === '/healthz') return reply(200, { status: 'ok' });
    if (req.url === '/readyz')
      return void store
        .ping(READY_PING_MS)
        .then((ok) => reply(ok ? 200 : 503, { status: ok ? 'ok' : 'etcd does not answer' }));
    reply(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, bind, () => resolve());
  });
  server.unref();
  logger.info({ port }, 'serving /healthz and /readyz');
  return server;
}
