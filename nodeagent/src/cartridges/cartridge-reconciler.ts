import fs from 'node:fs/promises';
import path from 'node:path';
import { CartridgeSpec, LibrarySpec, PoolSpec, keys, type NewEvent } from '@vtl/api';
import type { EventJournal, Informer, Store } from '@vtl/store';
import { Requeue, startController, watchInto, type ReconcileResult } from '@vtl/reconcile';
import type { Logger } from 'pino';
import type { EmulatorSupervisor } from '../dataplane/emulator-supervisor.js';
import type { NodeStatusPublisher } from '../dataplane/node-status.js';
import { MintBatcher, type MintItem, type MintOutcome } from './mint-batcher.js';
import { removeDeletedCartridge } from '@vtl/domain';

/**
 * Reconciles running at once. Most of them wait in the mint batcher, so this is how many
 * cartridges one batch can gather: a 400-slot mint goes to the emulator in two calls.
 */
const WORKERS = 256;

const ignore = { onPut: () => undefined, onDelete: () => undefined };

/**
 * Realises cartridge records on this node: mints the image into its home slot, or erases it
 * and removes the record once a delete was asked for. Keyed by label, level-triggered. Records
 * come from informer caches (no etcd read per cartridge) and mints go to the emulator in batches.
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
  const libraries = await store.informer(keys.libraries.prefix, LibrarySpec, ignore);
  const pools = await store.informer(keys.pools.prefix, PoolSpec, ignore);

  function libraryOnThisNode(id: number): LibrarySpec | undefined {
    const lib = libraries.get(keys.libraries.one(id))?.value;
    if (!lib) return undefined;
    return pools.get(keys.pools.one(lib.home_pool))?.value.node === node ? lib : undefined;
  }

  async function mintMany(library: number, items: MintItem[]): Promise<MintOutcome[]> {
    const emulator = supervisor.emulator;
    if (!emulator) throw new Error('the emulator is restarting; the mint is retried');
    const started = performance.now();
    const { results } = await emulator.mintBatch({ library, items });
    const emulatorMs = Math.round(performance.now() - started);
    const minted = results.filter((r) => !('error' in r));
    const events: NewEvent[] = minted.map((r) => ({
      kind: 'cart_minted',
      subject: r.label,
      detail: `library ${library} slot ${r.slot}`,
      data: { library, slot: r.slot },
    }));
    // Recorded in order and retried while the store does not answer; the answer waits at most
    // the store deadline for them.
    journal.record(...events);
    await Promise.all([
      Promise.race([journal.recorded(), new Promise((r) => setTimeout(r, store.deadlineMs))]),
      publisher.publish(),
    ]);
    const ms = Math.round(performance.now() - started);
    opts.logger.info(
      { library, count: items.length, minted: minted.length, emulatorMs, ms },
      'minted a batch',
    );
    return results;
  }
  const batcher = new MintBatcher(mintMany);
  const carts: { informer?: Informer<CartridgeSpec> } = {};

  async function reconcile(key: string): Promise<ReconcileResult> {
    // The first listing is handed to the queue before the informer is returned.
    const record = carts.informer ? carts.informer.get(key) : await store.get(key, CartridgeSpec);
    if (!record) return;
    const cart = record.value;
    const lib = libraryOnThisNode(cart.library);
    if (!lib) return;
    const emulator = supervisor.emulator;
    const served = publisher.libraries.find((l) => l.id === lib.id);
    const present = served?.cartridges.some((c) => c.label === cart.label) ?? false;

    if (cart.deleting) {
      if (present && emulator) await emulator.remove({ library: lib.id, label: cart.label });
      else if (!served) await fs.rm(path.join(lib.media_dir, cart.label), { recursive: true, force: true });
      else if (!emulator) return { requeueAfterMs: Requeue.soon };
      if (await removeDeletedCartridge(store, cart.label, record.modRevision))
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
    await batcher.mint(lib.id, { label: cart.label, slot: cart.home_slot });
  }

  const controller = startController<string>({
    name: 'cartridges',
    logger: opts.logger,
    reconcile,
    workers: WORKERS,
  });
  carts.informer = await watchInto(
    store,
    keys.cartridges.prefix,
    CartridgeSpec,
    controller.queue,
    (key) => key,
  );
  return {
    /** Looks at every cartridge again (after the data plane restarted). */
    resync: () => carts.informer?.items().forEach((_v, key) => controller.queue.add(key)),
    stop: async () => {
      await carts.informer?.close();
      await Promise.all([libraries.close(), pools.close()]);
      await controller.stop();
    },
  };
}
