import { DataplaneSpec, LibrarySpec, PoolSpec, keys } from '@vtl/api';
import { EventJournal, Store } from '@vtl/store';
import {
  Requeue,
  exitOnRestartRequest,
  runProcess,
  startController,
  startOpRunner,
  watchInto,
} from '@vtl/reconcile';
import { loadConfig } from './config.js';
import { hostPowerFrom } from './host-power.js';
import { ensureDefaultPool } from './pool/default-pool.js';
import { startPoolReconciler } from './pool/pool-reconciler.js';
import { EmulatorSupervisor } from './dataplane/emulator-supervisor.js';
import { emulatorConfig } from './dataplane/emulator-config.js';
import { NodeStatusPublisher } from './dataplane/node-status.js';
import { startCartridgeReconciler } from './cartridges/cartridge-reconciler.js';
import { driveOps } from './ops/drive-ops.js';
import { deleteLibraryOp } from './ops/delete-library.js';
import { rebootOp } from './ops/reboot.js';
import { LioFcDriver } from './fabric/lio-driver.js';
import { startFabricReconciler } from './fabric/fabric-reconciler.js';
import { startJobExecutor } from './jobs/job-executor.js';
import { currentBootId, interruptJobsAfterReboot } from './jobs/reboot-interrupt.js';

/** Status records live under this lease: they vanish about this long after the node dies. */
const STATUS_LEASE_TTL_SEC = 10;
const DATAPLANE_KEY = 'dataplane';

/** Entry point: one nodeagent per appliance node. */
runProcess('nodeagent', async (rootLogger) => {
  const config = loadConfig();
  const logger = rootLogger.child({ node: config.node });
  const store = await Store.connect({
    endpoints: config.etcdEndpoints,
    tls: config.etcdTls,
    sealingKeyFile: config.sealingKeyFile,
    logger,
  });
  const journal = new EventJournal(store);
  // Status records vanish with this lease when the node dies. A store stall longer than its TTL
  // loses it too: a new one is granted once etcd answers and the status is written again, so
  // the nodeagent (and the jobs it runs) carries on instead of exiting.
  const lease = await store.renewingLease(STATUS_LEASE_TTL_SEC);
  await ensureDefaultPool(store, config.node, config.defaultPoolPath, logger);
  const pools = await startPoolReconciler({ store, lease, node: config.node, logger });

  // The supervisor reports to the publisher, which reads the supervisor: tie them after both exist.
  const publish = { now: () => undefined as unknown };
  const supervisor = new EmulatorSupervisor({
    stateDir: config.stateDir,
    entry: config.emulatorEntry,
    logger,
    onEvent: (e) => {
      void journal.emit(e).catch((err) => logger.warn({ err }, 'event not recorded'));
      void publish.now();
    },
    onChange: () => void publish.now(),
  });
  const publisher = new NodeStatusPublisher({ store, lease, node: config.node, supervisor, logger });
  publish.now = () => publisher.publish();
  await publisher.start();
  lease.onRenewed(() => {
    logger.warn('status lease renewed after a store stall; publishing node and pool status again');
    publisher.republish();
    pools.republish();
  });

  const carts = await startCartridgeReconciler({
    store,
    journal,
    node: config.node,
    supervisor,
    publisher,
    logger,
  });

  await interruptJobsAfterReboot({ store, journal, node: config.node, bootId: await currentBootId() });
  const jobs = await startJobExecutor({
    store,
    journal,
    node: config.node,
    supervisor,
    publisher,
    logger,
    // Small chunks let tests interrupt an export half way; the engine's default otherwise.
    chunkBytes: Number(process.env.VTL_EXPORT_CHUNK_BYTES) || undefined,
  });

  // Initiator registry and FC target: applied live; rebuilt once per data-plane generation.
  const fabric = await startFabricReconciler({
    store,
    journal,
    node: config.node,
    supervisor,
    driver: new LioFcDriver(config.configfsRoot, config.sysfsRoot),
    logger: logger.child({ component: 'fabric' }),
    report: (status) => {
      publisher.fabric = status;
      void publisher.publish();
    },
  });

  // One level-triggered key for the whole data plane: desired generation and libraries.
  const dataplane = startController<string>({
    name: 'dataplane',
    logger,
    reconcile: async () => {
      const [desired, libraries, poolSpecs] = await Promise.all([
        store.get(keys.dataplane, DataplaneSpec),
        store.list(keys.libraries.prefix, LibrarySpec),
        store.list(keys.pools.prefix, PoolSpec),
      ]);
      const want = emulatorConfig(
        config,
        desired?.value,
        libraries.items.map((i) => i.value),
        poolSpecs.items.map((i) => i.value),
      );
      const before = supervisor.status.generation;
      await supervisor.ensure(want);
      await publisher.publish();
      if (supervisor.status.generation !== before) carts.resync();
      fabric.resync();
      return { requeueAfterMs: Requeue.poll };
    },
  });
  const dataplaneWatch = await watchInto(
    store,
    keys.dataplane,
    DataplaneSpec,
    dataplane.queue,
    () => DATAPLANE_KEY,
  );
  dataplane.queue.add(DATAPLANE_KEY);

  const hostPower = hostPowerFrom(config.hostPower);
  const ops = await startOpRunner({
    store,
    journal,
    executor: `node:${config.node}`,
    logger,
    handlers: {
      ...driveOps({ supervisor, publisher, journal }),
      delete_library: deleteLibraryOp({ store, journal, supervisor, publisher, hostPower }),
      reboot: rebootOp(hostPower),
    },
  });
  // A control-plane restart must leave the emulator serving even where stopping the nodeagent
  // normally stops the data plane (`npm start`): host I/O goes on (§4.2 rule 1).
  let controlPlaneRestart = false;
  const restartWatch = await exitOnRestartRequest(store, logger, () => (controlPlaneRestart = true));
  logger.info({ node: config.node }, 'nodeagent running');

  return async () => {
    await restartWatch.close();
    // A control-plane restart interrupts running jobs (retryable, §4.2 rule 1); any other stop
    // leaves them in their state so the next start resumes them.
    await jobs.stop({ interrupt: controlPlaneRestart ? 'a control-plane restart' : undefined });
    await ops.stop();
    await dataplaneWatch.close();
    await dataplane.stop();
    await fabric.stop();
    await carts.stop();
    await pools.stop();
    publisher.stop();
    if (config.stopEmulatorOnExit && !controlPlaneRestart) await supervisor.stop();
    else supervisor.detach();
    await store.close();
  };
});
