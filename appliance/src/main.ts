import path from 'node:path';
import { pino } from 'pino';
import { startEtcd, type EtcdProcess } from '@vtl/store';
import { loadConfig } from './config.js';
import { prepareStoreAccess } from './store-access.js';
import { SupervisedProcess } from './supervised-process.js';
import { prepareLogDir, prepareLogFile } from './log-files.js';

const root = path.resolve(import.meta.dirname, '../..');
const entry = (pkg: string, file: string) => path.join(root, pkg, 'dist', file);

/**
 * The single-node appliance: its own etcd, then the apiserver, the controller and one nodeagent
 * (which starts the tape emulator). SIGINT/SIGTERM stops everything; state stays on disk.
 */
async function main() {
  const config = loadConfig();
  const logger = pino({ name: 'appliance' });
  const logs = path.join(config.stateDir, 'logs');
  await prepareLogDir(logs);
  for (const name of ['etcd', 'apiserver', 'controller', 'nodeagent'])
    await prepareLogFile(path.join(logs, `${name}.log`));

  let etcd: EtcdProcess | undefined;
  let endpoints = config.etcdEndpoints;
  const access = await prepareStoreAccess({ ...config, external: endpoints.length > 0, logger });
  if (endpoints.length === 0) {
    etcd = await startEtcd({
      dataDir: path.join(config.stateDir, 'etcd'),
      clientPort: config.etcdClientPort,
      peerPort: config.etcdPeerPort,
      host: '127.0.0.1',
      logFile: path.join(logs, 'etcd.log'),
      detached: true,
      tls: access.etcdTls,
    });
    endpoints = [etcd.endpoint];
    logger.info({ endpoint: etcd.endpoint }, 'local etcd running');
  }

  const env = {
    ...process.env,
    VTL_STATE_DIR: config.stateDir,
    VTL_BIND: config.bind,
    VTL_NODE: config.node,
    VTL_ETCD_ENDPOINTS: endpoints.join(','),
    VTL_HTTPS_PORT: String(config.httpsPort),
    VTL_PLAIN_PORT: String(config.plainPort),
    VTL_ISCSI_PORT: String(config.iscsiPort),
  };
  const nodeagentEnv = {
    ...env,
    VTL_DEFAULT_POOL: process.env.VTL_DEFAULT_POOL ?? path.join(config.stateDir, 'pool'),
    // `npm start` owns the whole appliance: stopping it stops the data plane too.
    VTL_STOP_EMULATOR_ON_EXIT: '1',
  };
  const processes = [
    new SupervisedProcess(
      'apiserver',
      entry('apiserver', 'server.js'),
      { ...env, ...access.envFor('apiserver') },
      path.join(logs, 'apiserver.log'),
      logger,
    ),
    new SupervisedProcess(
      'controller',
      entry('controller', 'main.js'),
      { ...env, ...access.envFor('controller') },
      path.join(logs, 'controller.log'),
      logger,
    ),
    new SupervisedProcess(
      'nodeagent',
      entry('nodeagent', 'main.js'),
      { ...nodeagentEnv, ...access.envFor('nodeagent') },
      path.join(logs, 'nodeagent.log'),
      logger,
    ),
  ];
  processes.forEach((p) => p.start());
  logger.info(
    {
      https: `https://${config.bind}:${config.httpsPort}`,
      plain: config.plainPort ? `http://${config.bind}:${config.plainPort}` : 'disabled',
      stateDir: config.stateDir,
    },
    process.env.VTL_TLS_CERT_FILE
      ? `appliance starting (HTTPS certificate ${process.env.VTL_TLS_CERT_FILE})`
      : 'appliance starting (the HTTPS certificate is self-signed)',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'appliance stopping');
    await Promise.all(processes.map((p) => p.stop()));
    await etcd?.stop();
    logger.info('appliance stopped');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void stop(signal));
}

main().catch((err) => {
  console.error(
    JSON.stringify({
      level: 60,
      name: 'appliance',
      msg: 'appliance failed to start',
      err: String(err?.stack ?? err),
    }),
  );
  process.exit(1);
});
