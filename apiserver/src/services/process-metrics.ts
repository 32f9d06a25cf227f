import { X509Certificate } from 'node:crypto';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestDurations } from './request-durations.js';

/**
 * The apiserver process's own series, shared by its listeners: Node's default process_* and
 * nodejs_* metrics, vtl_build_info, and the HTTP request duration histogram.
 */
export const processRegistry = new Registry();
collectDefaultMetrics({ register: processRegistry });
// Gauges named like counters (promtool check metrics refuses them); nodejs_active_handles,
// nodejs_active_requests and nodejs_active_resources carry the same counts by type.
for (const name of [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
])
  processRegistry.removeSingleMetric(name);

const buildInfo = new Gauge({
  name: 'vtl_build_info',
  help: 'Always 1: the running release and the Node.js it runs on, as labels',
  labelNames: ['version', 'node_version'],
  registers: [processRegistry],
});

/** Labels vtl_build_info with the running version (once, at start). */
export function setBuildInfo(version: string): void {
  buildInfo.reset();
  buildInfo.set({ version, node_version: process.version }, 1);
}

/** http_request_duration_seconds (request-durations.ts: without prom-client's per-call label hashing). */
export const requestDurations = new RequestDurations();
processRegistry.registerMetric(requestDurations.asMetric());

/**
 * Records one answered request. `route` is the route's template (`/api/libraries/:id`), never
 * the URL, so the series stay few; a request no route matched counts as `unmatched`.
 */
export function observeHttpRequest(
  method: string,
  route: string | undefined,
  status: number,
  seconds: number,
): void {
  requestDurations.observe(method, route ?? 'unmatched', status, seconds);
}

const certificateExpiry = new Gauge({
  name: 'vtl_certificate_expiry_timestamp_seconds',
  help: 'When a certificate the apiserver serves with stops being valid (Unix seconds)',
  labelNames: ['certificate'],
  registers: [processRegistry],
});

/** Records the expiry of the leaf certificate of a PEM chain (the first in it). */
export function setCertificateExpiry(certificate: string, pem: string): void {
  const validTo = Date.parse(new X509Certificate(pem).validTo);
  if (Number.isFinite(validTo)) certificateExpiry.set({ certificate }, validTo / 1000);
}
