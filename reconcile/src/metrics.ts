import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The reconcile metrics of this process, named as controller-runtime names them, so the
 * usual dashboards and alerts apply: reconciles by controller and result, their duration,
 * and each controller's work-queue depth.
 */
export const reconcileRegistry = new Registry();
// With Node's process_* and nodejs_* series, but its gauges named like counters (promtool
// refuses them; nodejs_active_handles and the like carry the same counts).
collectDefaultMetrics({ register: reconcileRegistry });
for (const name of [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
])
  reconcileRegistry.removeSingleMetric(name);

/** How a pass ended, as controller-runtime's `result` label says it. */
export type ReconcileOutcome = 'success' | 'requeue_after' | 'error' | 'terminal_error';

const reconcileTotal = new Counter({
  name: 'controller_runtime_reconcile_total',
  help: 'Total number of reconciliations per controller and result',
  labelNames: ['controller', 'result'],
  registers: [reconcileRegistry],
});
const reconcileErrors = new Counter({
  name: 'controller_runtime_reconcile_errors_total',
  help: 'Total number of reconciliation errors per controller',
  labelNames: ['controller'],
  registers: [reconcileRegistry],
});
const reconcileTime = new Histogram({
  name: 'controller_runtime_reconcile_time_seconds',
  help: 'Length of time per reconciliation per controller',
  labelNames: ['controller'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [reconcileRegistry],
});

/** The work queues whose depth is reported, by controller name. */
const queues = new Map<string, { readonly length: number }>();
new Gauge({
  name: 'workqueue_depth',
  help: 'Current depth of the work queue',
  labelNames: ['name'],
  registers: [reconcileRegistry],
  collect() {
    this.reset();
    for (const [name, q] of queues) this.set({ name }, q.length);
  },
});
/** Registers a controller's queue for the depth gauge; returns the unregister function. */
export function trackQueue(name: string, queue: { readonly length: number }): () => void {
  queues.set(name, queue);
  return () => {
    if (queues.get(name) === queue) queues.delete(name);
  };
}

/** Records one finished reconcile pass. */
export function observeReconcile(controller: string, outcome: ReconcileOutcome, seconds: number): void {
  reconcileTotal.inc({ controller, result: outcome });
  if (outcome === 'error' || outcome === 'terminal_error') reconcileErrors.inc({ controller });
  reconcileTime.observe({ controller }, seconds);
}

/**
 * Serves GET /metrics (Prometheus text) on `addr` (host:port, port 0 for any free one), for a
 * process that has no HTTP server of its own (the controller, the nodeagent).
 */
export async function serveMetrics(
  addr: string,
  logger: Logger,
): Promise<{ port: number; close(): Promise<void> }> {
  const at = addr.lastIndexOf(':');
  const host = at > 0 ? addr.slice(0, at) : '127.0.0.1';
  const port = Number(at >= 0 ? addr.slice(at + 1) : addr);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`The metrics address must be host:port (e.g. 127.0.0.1:9464), got "${addr}"`);
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics is served here.\n');
      return;
    }
    reconcileRegistry
      .metrics()
      .then((text) => res.writeHead(200, { 'content-type': reconcileRegistry.contentType }).end(text))
      .catch((err) => {
        logger.warn({ err }, 'metrics not collected');
        res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  logger.info({ addr: `${host}:${bound}` }, 'serving reconcile metrics on /metrics');
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
