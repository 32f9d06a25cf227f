import {
  boundedStep,
  exitOnRestartRequest,
  runStoreProcess,
  startOpRunner,
  type StoreProcessSpec,
} from '@vtl/reconcile';
import { loadConfig, type NodeagentConfig } from './config.js';
import { hostPowerFrom } from './host-power.js';
import { ensureDefaultPool } from './pool/default-pool.js';
import { startPoolReconciler } from './pool/pool-reconciler.js';
import { EmulatorSupervisor } from './dataplane/emulator-supervisor.js';
import { adoptRunningEmulator, startDataplaneReconciler } from './dataplane/dataplane-reconciler.js';
import { NODE_HEARTBEAT_INTERVAL_MS, NodeStatusPublisher } from './dataplane/node-status.js';
import { startCartridgeReconciler } from './cartridges/cartridge-reconciler.js';
import { driveOps } from './ops/drive-ops.js';
import { eraseLibraryOp } from './ops/erase-library.js';
import { rebootOp } from './ops/reboot.js';
import { poolPathCheckOp } from './ops/pool-path-check.js';
import { storageDeviceCheckOp } from './ops/storage-device-check.js';
import { startStorageReconciler } from './storage/storage-reconciler.js';
import { startDedupRunner } from './storage/dedup-runner.js';
import type { EmuLibrary } from '@vtl/emulator';
import { LioFcDriver } from './fabric/lio-driver.js';
import { startFabricReconciler } from './fabric/fabric-reconciler.js';
import { TcmuHandlerSupervisor, handlerEndpoint } from './fabric/tcmu-handler.js';
import { startJobExecutor } from './jobs/job-executor.js';
import { currentBootId, interruptJobsAfterReboot } from './jobs/reboot-interrupt.js';
import { claimNode } from './node-claim.js';

/** Status records live under this lease: they vanish about this long after the node dies. */
const STATUS_LEASE_TTL_SEC = 10;

/** The nodeagent's configuration; every log line names its node. */
const nodeagent: StoreProcessSpec<NodeagentConfig> = {
  name: 'nodeagent',
  loadConfig,
  logBindings: (config) => ({ node: config.node }),
};

/** Entry point: one nodeagent per appliance node. */
runStoreProcess(nodeagent, async ({ config, logger, store, journal }) => {
  // One nodeagent per node: a second one waits here until the first is gone.
  const claim = await claimNode(store, config.node, logger);
  // Status records vanish with this lease when the node dies. A store stall longer than its TTL
  // loses it too: a new one is granted once etcd answers and the status is written again, so
  // the nodeagent (and the jobs it runs) carries on instead of exiting.
  const lease = await store.renewingLease(STATUS_LEASE_TTL_SEC);
  await ensureDefaultPool(store, config.node, config.defaultPoolPath, logger);
  // Set below, once the emulator's publisher exists: the dedup pass leaves loaded cartridges alone.
  const loaded = { labels: () => new Set<string>(), libraries: (): readonly EmuLibrary[] => [] };
  const refreshStorage = { now: () => undefined as unknown };
  const dedup = await startDedupRunner({
    store,
    node: config.node,
    mountpoint: config.storageMount,
    loadedLabels: () => loaded.labels(),
    libraries: () => loaded.libraries(),
    maxPauseMs: config.dedupMaxPauseMs,
    onChange: () => refreshStorage.now(),
    logger: logger.child({ component: 'dedup' }),
  });
  const storage = await startStorageReconciler({
    store,
    node: config.node,
    mountpoint: config.storageMount,
    dedup: () => dedup.status,
    onPass: (spec, mounted) => dedup.update(spec, mounted),
    logger: logger.child({ component: 'storage' }),
  });
  refreshStorage.now = () => storage.refresh();
  const pools = await startPoolReconciler({
    store,
    lease,
    node: config.node,
    storageMount: config.storageMount,
    dedup: () => dedup.status,
    refreshMaxMs: config.poolRefreshMaxMs,
    logger,
  });

  // The supervisor reports to the publisher, which reads the supervisor: tie them after both exist.
  const publish = { now: () => undefined as unknown };
  const supervisor = new EmulatorSupervisor({
    stateDir: config.stateDir,
    entry: config.emulatorEntry,
    unit: config.emulatorUnit,
    logger,
    onEvent: (e) => {
      journal.record(e); // in order, retried while the store does not answer
      void publish.now();
    },
    onChange: () => void publish.now(),
  });
  const publisher = new NodeStatusPublisher({
    store,
    lease,
    node: config.node,
    supervisor,
    logger,
    staleAfterMs: STATUS_LEASE_TTL_SEC * 1000 - NODE_HEARTBEAT_INTERVAL_MS,
  });
  // A cartridge just loaded is left out of a running dedup pass at once, not at its next tick.
  publish.now = () => publisher.publish().then(() => dedup.poke());
  loaded.labels = () =>
    new Set(publisher.libraries.flatMap((l) => l.drives.map((d) => d.loaded).filter(Boolean)));
  // Their drives' host I/O pauses a dedup pass, for the libraries on the storage (PassPacer).
  loaded.libraries = () => publisher.libraries;
  // The emulator outlives a control-plane restart: look at it before the first record, which
  // would otherwise say "stopped (not started)" while it serves (adoptRunningEmulator).
  await adoptRunningEmulator({ store, config, supervisor }).catch((err: Error) =>
    logger.warn({ err }, 'no first look at the emulator; the data-plane reconciler looks next'),
  );
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
    chunkBytes: config.exportChunkBytes,
    codecNice: config.codecNice,
    zstdLevel: config.zstdLevel,
    version: config.version,
  });

  // Initiator registry and FC target: applied live; rebuilt once per data-plane generation.
  const fabric = await startFabricReconciler({
    store,
    journal,
    node: config.node,
    supervisor,
    driver: new LioFcDriver(config.configfsRoot, config.sysfsRoot, config.lio),
    logger: logger.child({ component: 'fabric' }),
    report: (status) => {
      publisher.fabric = status;
      void publisher.publish();
    },
  });

  // FC hosts' commands: the TCMU handler, kept running where the emulator is (docs/fc.md): here
  // when this nodeagent spawns the emulator; its container's runner or a unit otherwise.
  const tcmu =
    config.tcmuHandler && !config.emulatorUnit
      ? new TcmuHandlerSupervisor({
          binary: config.tcmuHandler.binary,
          endpoint: handlerEndpoint(config.tcmuHandler.listen),
          sysfsRoot: config.sysfsRoot,
          configfsRoot: config.configfsRoot,
          stateDir: config.stateDir,
          logger: logger.child({ component: 'tcmu' }),
        })
      : undefined;
  await tcmu?.start();

  // One level-triggered key for the whole data plane: desired generation and libraries.
  const dataplane = await startDataplaneReconciler({
    store,
    config,
    supervisor,
    publisher,
    logger,
    afterPass: (restarted) => {
      if (restarted) carts.resync();
      fabric.resync();
    },
  });

  const hostPower = hostPowerFrom(config.hostPower);
  const ops = await startOpRunner({
    store,
    journal,
    executor: `node:${config.node}`,
    logger,
    handlers: {
      ...driveOps({ supervisor, publisher, journal }),
      erase_library: eraseLibraryOp({ supervisor, publisher }),
      reboot: rebootOp(hostPower),
      pool_path_check: poolPathCheckOp(config.stateDir),
      storage_device_check: storageDeviceCheckOp(),
    },
  });
  // A control-plane restart must leave the emulator serving even where stopping the nodeagent
  // normally stops the data plane (`npm start`): host I/O goes on (§4.2 rule 1).
  let controlPlaneRestart = false;
  // An update's restart (resume_jobs) leaves jobs running, for the next nodeagent to resume.
  let pauseJobsFor: string | undefined;
  const restartWatch = await exitOnRestartRequest(store, logger, (request) => {
    controlPlaneRestart = true;
    if (request.resume_jobs) pauseJobsFor = request.reason ?? 'a control-plane restart';
  });
  logger.info('nodeagent running');

  // Every step bounded, within a shared budget: with etcd stopped or gone the emulator is still
  // stopped (or let go) before runProcess's hard exit. runStoreProcess then closes the metrics
  // endpoint, records the held events and closes the store, in one more second.
  return async (reason) => {
    let until = Date.now() + 3_000;
    const step = (name: string, fn: () => unknown) =>
      boundedStep(logger, name, fn, Math.max(100, until - Date.now()));
    await step('close restart watch', () => restartWatch.close());
    // A control-plane restart interrupts running jobs (retryable, §4.2 rule 1), except an
    // update's (resume_jobs), which pauses them; any other stop leaves them in their state so
    // the next start resumes them.
    await step('stop jobs', () =>
      jobs.stop(
        pauseJobsFor !== undefined
          ? { pause: pauseJobsFor }
          : { interrupt: controlPlaneRestart ? 'a control-plane restart' : undefined },
      ),
    );
    await step('stop ops', () => ops.stop());
    await step('stop dataplane', () => dataplane.stop());
    await step('stop fabric', () => fabric.stop());
    await step('stop cartridges', () => carts.stop());
    await step('stop pools', () => pools.stop());
    await step('stop storage', () => storage.stop());
    await step('stop dedup pass', () => dedup.stop());
    publisher.stop();
    // The launcher died: the next start's nodeagent adopts the emulator, host sessions go on.
    const keepEmulator = controlPlaneRestart || reason === 'supervisor-gone';
    until = Date.now() + 2_500;
    if (config.stopEmulatorOnExit && !keepEmulator) await step('stop emulator', () => supervisor.stop());
    else supervisor.detach();
    await step('stop TCMU handler', () => tcmu?.stop({ kill: config.stopEmulatorOnExit && !keepEmulator }));
    until = Date.now() + 500;
    await step('release node', () => claim.release());
  };
});
