import fs from 'node:fs/promises';
import path from 'node:path';
import {
  CartridgeSpec,
  DataplaneSpec,
  LibrarySpec,
  LibraryStatus,
  PoolSpec,
  keys,
  type DeleteLibraryResponse,
} from '@vtl/api';
import type { OpHandler } from '@vtl/reconcile';
import type { EventJournal, Store } from '@vtl/store';
import type { EmulatorSupervisor } from '../dataplane/emulator-supervisor.js';
import type { NodeStatusPublisher } from '../dataplane/node-status.js';
import type { HostPower } from '../host-power.js';

/**
 * Library delete (§4.6 rule 4): erase every cartridge, the library's media directory and its
 * records; a library that was ever served makes the appliance reboot once that is persisted.
 * Each step is idempotent, so a retry after an interruption finishes the cleanup.
 */
export function deleteLibraryOp(deps: {
  store: Store;
  journal: EventJournal;
  supervisor: EmulatorSupervisor;
  publisher: NodeStatusPublisher;
  hostPower: HostPower;
}): OpHandler {
  const { store, journal, supervisor, publisher, hostPower } = deps;
  return async (op, ctx) => {
    const id = Number(op.params.library);
    const record = await store.get(keys.libraries.one(id), LibrarySpec);
    if (!record) {
      await ctx.step(`Library ${id} is already removed`);
      return { ok: true, library: id, name: '', cartridges_deleted: 0, skipped: [], rebooting: false };
    }
    const lib = record.value;
    const wasLive = (await store.get(keys.libraryStatus.one(id), LibraryStatus))?.value.state === 'active';
    await store.update(keys.libraries.one(id), LibrarySpec, (cur) =>
      cur && !cur.deleting ? { ...cur, deleting: true } : undefined,
    );
    await ctx.step(`Library ${id} (${lib.name}) marked for deletion`);

    const carts = (await store.list(keys.cartridges.prefix, CartridgeSpec)).items.filter(
      (c) => c.value.library === id,
    );
    const emulator = supervisor.emulator;
    const served = publisher.libraries.find((l) => l.id === id);
    const skipped: string[] = [];
    for (const { key, value: cart } of carts) {
      try {
        const loaded = served?.drives.find((d) => d.loaded === cart.label);
        if (emulator && loaded) await emulator.unload({ library: id, drive: loaded.index, force: true });
        if (emulator && served?.cartridges.some((c) => c.label === cart.label))
          await emulator.remove({ library: id, label: cart.label });
      } catch (err) {
        ctx.log.warn(
          { err, label: cart.label },
          'cartridge not removed from the emulator; its files go with the library',
        );
        skipped.push(cart.label);
      }
      await store.delete(key);
      await journal.emit({ kind: 'cart_deleted', subject: cart.label, detail: `library ${id} deleted` });
    }
    await ctx.step(`Erased ${carts.length} cartridges`);

    // Only ever remove a directory that is inside the library's pool.
    const pool = (await store.get(keys.pools.one(lib.home_pool), PoolSpec))?.value;
    if (pool && path.resolve(lib.media_dir).startsWith(path.resolve(pool.path) + path.sep))
      await fs.rm(lib.media_dir, { recursive: true, force: true });
    await store.update(keys.dataplane, DataplaneSpec, (cur) =>
      cur && cur.libraries.includes(id)
        ? { ...cur, libraries: cur.libraries.filter((l) => l !== id) }
        : undefined,
    );
    await store
      .transaction()
      .delete(keys.libraries.one(id))
      .delete(keys.libraryStatus.one(id))
      .delete(keys.poolHome(lib.home_pool))
      .delete(keys.librarySerial(lib.serial))
      .commit();
    await ctx.step(`Library ${id} (${lib.name}) removed; pool ${pool?.name ?? lib.home_pool} is free`);
    await publisher.publish();

    if (wasLive) {
      await ctx.step('The library was served: the appliance reboots now');
      ctx.announceReboot();
      ctx.afterFinish(() => hostPower.reboot(`library ${id} (${lib.name}) deleted`));
    }
    const result: DeleteLibraryResponse = {
      ok: true,
      library: id,
      name: lib.name,
      cartridges_deleted: carts.length - skipped.length,
      skipped,
      rebooting: wasLive,
    };
    return result;
  };
}
