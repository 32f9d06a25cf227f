import path from 'node:path';
// Not the store's index: it would load the etcd client (gRPC) the launcher never uses.
import { startEtcd, type EtcdProcess } from '@vtl/etcd-launcher';
import { loadConfig } from './config.js';
import { prepareStoreAccess } from './store-access.js';
import { SupervisedProcess } from './supervised-process.js';
import { prepareLogDir, prepareLogFile } from './log-files.js';
import { announceWhenReady, launcherLogger } from './banner.js';
import { takeStateDir } from './run-state.js';
import { stopEmulatorIfRunning } from './emulator-stop.js';
import { childTuning } from './memory-tuning.js';
// Side effect: the launcher, too, collects its garbage once idle after a burst.
import './idle-gc.js';
import { prepareReleases, releaseEntry } from './release-entry.js';

/** The appliance exits this long after SIGTERM whatever its children and etcd do. */
const HARD_EXIT_MS = 9_500;
/** The share of etcd and a leftover emulator: the children go first, then these two. */
const LAST_STOP_MS = 1_000;

const root = path.resolve(import.meta.dirname, '../..');

/**
 * The single-node appliance: its own etcd, then the apiserver, the controller and one nodeagent
 * (which starts the tape emulator). SIGINT/SIGTERM stops everything within 10 s; state stays on
 * disk. One appliance per state directory (a lock there); if this process is killed, its
 * children exit by themselves and the next start stops whatever is left (pid files there).
 */
async function main() {
  const config = loadConfig();
  // At a terminal pino-pretty; else JSON written synchronously: pino's default exit-time flush
  // retries a failed write forever, so an appliance whose stdout reader went away first (npm, a
  // closed terminal) would never exit.
  const logger = launcherLogger('appliance');
  // Children's output is copied to stdout: a reader that went away must not crash the appliance.
  process.stdout.on('error', () => undefined);
  const logs = path.join(config.stateDir, 'logs');
  await prepareLogDir(logs);
  for (const name of ['etcd', 'apiserver', 'controller', 'nodeagent'])
    await prepareLogFile(path.join(logs, `${name}.log`));
  const run = await takeStateDir(config.stateDir, logger);
  // Signed updates switch the control plane between release directories (docs/updates.md).
  const releasesDir = path.join(config.stateDir, 'releases');
  await prepareReleases(releasesDir, root);
  const entry = (pkg: string, file: string) => releaseEntry(releasesDir, root, pkg, file);

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
      dieWithParent: true,
      tls: access.etcdTls,
    });
    await run.pids.write('etcd', etcd.pid, 'etcd');
    endpoints = [etcd.endpoint];
    logger.info({ endpoint: etcd.endpoint }, 'local etcd running');
  }

  const env = {
    ...config.inherited,
    VTL_STATE_DIR: config.stateDir,
    VTL_BIND: config.bind,
    VTL_NODE: config.node,
    VTL_ETCD_ENDPOINTS: endpoints.join(','),
    VTL_HTTPS_PORT: String(config.httpsPort),
    VTL_PLAIN_PORT: String(config.plainPort),
    VTL_ISCSI_PORT: String(config.iscsiPort),
    VTL_RELEASES_DIR: releasesDir,
  };
  const nodeagentEnv = {
    ...env,
    VTL_DEFAULT_POOL: config.defaultPool,
    // The data plane stays on the installed tree: an online update replaces the control plane only.
    VTL_EMULATOR_ENTRY: config.inherited.VTL_EMULATOR_ENTRY ?? path.join(root, 'emulator', 'dist', 'main.js'),
    // `npm start` owns the whole appliance: stopping it stops the data plane too.
    VTL_STOP_EMULATOR_ON_EXIT: '1',
  };
  const processes = [
    new SupervisedProcess(
      'apiserver',
      entry('apiserver', 'server.js'),
      {
        ...env,
        ...access.envFor('apiserver'),
        ...childTuning('apiserver', config.inherited.NODE_OPTIONS).env,
      },
      path.join(logs, 'apiserver.log'),
      logger,
      (pid) => void run.pids.write('apiserver', pid, 'apiserver/dist/server.js'),
      childTuning('apiserver', config.inherited.NODE_OPTIONS).execArgv,
    ),
    new SupervisedProcess(
      'controller',
      entry('controller', 'main.js'),
      {
        ...env,
        ...access.envFor('controller'),
        ...childTuning('controller', config.inherited.NODE_OPTIONS).env,
      },
      path.join(logs, 'controller.log'),
      logger,
      (pid) => void run.pids.write('controller', pid, 'controller/dist/main.js'),
      childTuning('controller', config.inherited.NODE_OPTIONS).execArgv,
    ),
    new SupervisedProcess(
      'nodeagent',
      entry('nodeagent', 'main.js'),
      {
        ...nodeagentEnv,
        ...access.envFor('nodeagent'),
        ...childTuning('nodeagent', config.inherited.NODE_OPTIONS).env,
      },
      path.join(logs, 'nodeagent.log'),
      logger,
      (pid) => void run.pids.write('nodeagent', pid, 'nodeagent/dist/main.js'),
      childTuning('nodeagent', config.inherited.NODE_OPTIONS).execArgv,
    ),
  ];
  processes.forEach((p) => p.start());
  logger.info(
    {
      https: `https://${config.bind}:${config.httpsPort}`,
      plain: config.plainPort ? `http://${config.bind}:${config.plainPort}` : 'disabled',
      stateDir: config.stateDir,
    },
    config.tlsCertFile
      ? `appliance starting (HTTPS certificate ${config.tlsCertFile})`
      : 'appliance starting (the HTTPS certificate is self-signed)',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'appliance stopping');
    setTimeout(() => {
      logger.error('appliance did not stop in time; exiting anyway');
      process.exit(1);
    }, HARD_EXIT_MS);
    await Promise.all(processes.map((p) => p.stop(HARD_EXIT_MS - LAST_STOP_MS - 1_000)));
    await Promise.all([
      stopEmulatorIfRunning(config.stateDir, logger, LAST_STOP_MS),
      etcd?.stop(LAST_STOP_MS),
    ]);
    for (const name of ['apiserver', 'controller', 'nodeagent', 'etcd']) await run.pids.remove(name);
    await run.lock.release();
    logger.info('appliance stopped');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void stop(signal));
  void announceWhenReady(config, logger, { stopped: () => stopping });
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
