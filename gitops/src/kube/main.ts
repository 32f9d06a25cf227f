import http from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { KubeAdapter } from './adapter.js';
import { ApplianceClient } from './appliance-client.js';
import { loadConfig } from './config.js';

/**
 * The Kubernetes source's process (charts/vtl gitops-deployment.yaml): watches the
 * vtl.appliance.io resources of its namespace and applies them to the appliance.
 */
async function main() {
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: { service: 'gitops-kube', namespace: config.namespace } });
  const kc = new KubeConfig();
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromCluster();
  const appliance = new ApplianceClient(config);
  const adapter = new KubeAdapter(config, kc, appliance, log);

  // /healthz: the event loop turns. /readyz: every kind is listed and the last apply reached the appliance.
  if (config.healthPort > 0) {
    const server = http.createServer((req, res) => {
      const ok = req.url === '/healthz' || (req.url === '/readyz' && adapter.ready);
      res.writeHead(ok ? 200 : req.url === '/readyz' ? 503 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: ok ? 'ok' : 'not ready' }));
    });
    server.listen(config.healthPort, '0.0.0.0').unref();
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    await adapter.stop();
    appliance.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  log.info({ source: config.source, api: config.apiUrl }, 'starting the Kubernetes source');
  await adapter.start();
}

main().catch((err) => {
  console.error(`gitops-kube: ${(err as Error).message}`);
  process.exit(1);
});
