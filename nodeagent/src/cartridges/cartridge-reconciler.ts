import fs from 'node:fs/promises';
import path from 'node:path';
import { CartridgeSpec, LibrarySpec, PoolSpec, keys } from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import { Requeue, startController, watchInto, type ReconcileResult } from '@vtl/reconcile';
import type { Logger } from 'pino';
import type { EmulatorSupervisor } from '../dataplane/emulator-supervisor.js';
import type { NodeStatusPublisher } from '../dataplane/node-status.js';

/**
 * Realises cartridge records on this node: mints the image into its home slot, or erases it
 * and removes the record once a delete was asked for. Keyed by label, level-triggered.
 */
export async function startCartridgeReconciler(opts: {
  store: Store;
  journal: EventJournal;
  node: string;
  supervisor: EmulatorSupervisor;
  publisher: NodeStatusPublisher;
  logger: Logger;
}) {
  const { store, journal, node, supervisor, publisher } = opts;

  async function libraryOnThisNode(id: number): Promise<LibrarySpec | undefined> {
    const lib = (await store.get(keys.libraries.one(id), LibrarySpec))?.value;
    if (!lib) return undefined;
    const pool = (await store.get(keys.pools.one(lib.home_pool), PoolSpec))?.value;
    return pool?.node === node ? lib : undefined;
  }

  async function reconcile(key: string): Promise<ReconcileResult> {
    const record = await store.get(key, CartridgeSpec);
    if (!record) return;
    const cart = record.value;
    const lib = await libraryOnThisNode(cart.library);
    if (!lib) return;
    const emulator = supervisor.emulator;
    const served = publisher.libraries.find((l) => l.id === lib.id);
    const present = served?.cartridges.some((c) => c.label === cart.label) ?? false;

    if (cart.deleting) {
      if (present && emulator) await emulator.remove({ library: lib.id, label: cart.label });
      else if (!served) await fs.rm(path.join(lib.media_dir, cart.label), { recursive: true, force: true });
      else if (!emulator) return { requeueAfterMs: Requeue.soon };
      if (await store.delete(key, { modRevision: record.modRevision }))
        await journal.emit({
          kind: 'cart_deleted',
          subject: cart.label,
          detail: `erased from library ${lib.id}`,
        });
      await publisher.publish();
      return;
    }
    if (present) return;
    // Not served yet (pending apply) or the emulator is restarting: look again shortly.
    if (!served || !emulator) return { requeueAfterMs: Requeue.soon };
    await emulator.mint({ library: lib.id, label: cart.label, slot: cart.home_slot });
    await journal.emit({
      kind: 'cart_minted',
      subject: cart.label,
      detail: `library ${lib.id} slot ${cart.home_slot}`,
      data: { library: lib.id, slot: cart.home_slot },
    });
    await publisher.publish();
  }

  const controller = startController<string>({ name: 'cartridges', logger: opts.logger, reconcile });
  const informer = await watchInto(
    store,
    keys.cartridges.prefix,
    CartridgeSpec,
    controller.queue,
    (key) => key,
  );
  return {
    /** Looks at every cartridge again (after the data plane restarted). */
    resync: () => informer.items().forEach((_v, key) => controller.queue.add(key)),
    stop: async () => {
      await informer.close();
      await controller.stop();
    },
  };
}
