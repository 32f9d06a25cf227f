import type { Logger } from 'pino';
import { DataplaneSpec, LibrarySpec, PoolSpec, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import type { EmulatorConfig } from '@vtl/emulator';
import { Requeue, startController, watchInto } from '@vtl/reconcile';
import type { NodeagentConfig } from '../config.js';
import { emulatorConfig } from './emulator-config.js';
import type { EmulatorSupervisor } from './emulator-supervisor.js';
import type { NodeStatusPublisher } from './node-status.js';

/** The emulator configuration this node should run now: the desired data-plane record's. */
export async function wantedEmulator(store: Store, config: NodeagentConfig): Promise<EmulatorConfig> {
  const [desired, libraries, poolSpecs] = await Promise.all([
    store.get(keys.dataplane, DataplaneSpec),
    store.list(keys.libraries.prefix, LibrarySpec),
    store.list(keys.pools.prefix, PoolSpec),
  ]);
  return emulatorConfig(
    config,
    desired?.value,
    libraries.items.map((i) => i.value),
    poolSpecs.items.map((i) => i.value),
  );
}

/**
 * A starting nodeagent's first look, before it publishes anything: an emulator left running by
 * the previous nodeagent (a control-plane restart, an update or a rollback keep it serving) is
 * adopted if it serves the wanted generation (EmulatorSupervisor.lookFirst). Without it the
 * first node record is the supervisor's initial "stopped (not started)" with no libraries, and
 * until the reconciler's first pass adopts the emulator (after the cartridge, job and fabric
 * reconcilers have started: seconds on a loaded machine) the API refuses requests on its
 * libraries with 503 though the emulator never stopped serving them. Returns whether it adopted.
 */
export async function adoptRunningEmulator(opts: {
  store: Store;
  config: NodeagentConfig;
  supervisor: EmulatorSupervisor;
}): Promise<boolean> {
  return opts.supervisor.lookFirst(await wantedEmulator(opts.store, opts.config));
}

/** The one queue key: the data plane is one level-triggered object per node. */
const KEY = 'dataplane';

/**
 * The nodeagent's data-plane reconciler: brings this node's tape emulator to the desired
 * data-plane record (generation and libraries, written by the controller) and reports what it
 * runs. It only reads the record; the emulator it supervises is node-local. After a restart of
 * the emulator the cartridge and fabric reconcilers are told to look again.
 */
export async function startDataplaneReconciler(opts: {
  store: Store;
  config: NodeagentConfig;
  supervisor: EmulatorSupervisor;
  publisher: NodeStatusPublisher;
  /** Called after every pass; `restarted` when the emulator's generation changed. */
  afterPass: (restarted: boolean) => void;
  logger: Logger;
}): Promise<{ stop(): Promise<void> }> {
  const { store, config, supervisor, publisher } = opts;
  const controller = startController<string>({
    name: 'dataplane',
    logger: opts.logger,
    reconcile: async () => {
      const want = await wantedEmulator(store, config);
      const before = supervisor.status.generation;
      await supervisor.ensure(want);
      await publisher.publish();
      opts.afterPass(supervisor.status.generation !== before);
      // The emulator is a child process: look again now and then in case it died.
      return { requeueAfterMs: Requeue.poll };
    },
  });
  const watch = await watchInto(store, keys.dataplane, DataplaneSpec, controller.queue, () => KEY);
  controller.queue.add(KEY);
  return {
    stop: async () => {
      await watch.close();
      await controller.stop();
    },
  };
}
