import { z } from 'zod';
import {
  CartridgeSpec,
  LibrarySpec,
  LibraryStatus,
  PoolSpec,
  keys,
  type DeleteLibraryResponse,
  type EraseLibraryParams,
} from '@vtl/api';
import type { OpHandler } from '@vtl/reconcile';
import type { EventJournal, Store } from '@vtl/store';
import { dropFromDataplane, markLibraryDeleting, removeLibrary, removeLibraryCartridge } from '@vtl/domain';
import { runNodeOp } from './node-op.js';

/** How long the node may take to erase a library's cartridges and directory. */
export const ERASE_TIMEOUT_MS = 10 * 60_000;

const EraseResult = z.object({ skipped: z.array(z.string()) });

/**
 * Library delete (§4.6 rule 4), the controller's part: it is the one writer of the library's
 * records and of the data-plane record, so it marks the library deleting, asks the library's
 * node to erase what is node-local (emulator cartridges, the media directory), then deletes the
 * cartridge records, drops the library from the data plane and deletes its spec and status.
 * A library that was ever served makes its node reboot once that is persisted. Every step is
 * idempotent, so a retry after an interruption (a controller restart) finishes the cleanup.
 */
export function deleteLibraryOp(deps: { store: Store; journal: EventJournal }): OpHandler {
  const { store, journal } = deps;
  return async (op, ctx) => {
    const id = Number(op.params.library);
    const record = await store.get(keys.libraries.one(id), LibrarySpec);
    if (!record) {
      await ctx.step(`Library ${id} is already removed`);
      return { ok: true, library: id, name: '', cartridges_deleted: 0, skipped: [], rebooting: false };
    }
    const lib = record.value;
    const wasLive = (await store.get(keys.libraryStatus.one(id), LibraryStatus))?.value.state === 'active';
    await markLibraryDeleting(store, id);
    await ctx.step(`Library ${id} (${lib.name}) marked for deletion`);

    const carts = (await store.list(keys.cartridges.prefix, CartridgeSpec)).items.filter(
      (c) => c.value.library === id,
    );
    const pool = (await store.get(keys.pools.one(lib.home_pool), PoolSpec))?.value;
    let skipped: string[] = [];
    if (pool) {
      const params: EraseLibraryParams = {
        library: id,
        labels: carts.map((c) => c.value.label),
        media_dir: lib.media_dir,
        pool_path: pool.path,
      };
      const erased = await runNodeOp(
        store,
        { kind: 'erase_library', node: pool.node, params, requestedBy: `delete_library#${op.id}` },
        ERASE_TIMEOUT_MS,
      );
      skipped = EraseResult.parse(erased).skipped;
    }
    for (const { value: cart } of carts) {
      await removeLibraryCartridge(store, cart.label);
      await journal.emit({ kind: 'cart_deleted', subject: cart.label, detail: `library ${id} deleted` });
    }
    await ctx.step(`Erased ${carts.length} cartridges`);

    await dropFromDataplane(store, id);
    await removeLibrary(store, lib);
    await ctx.step(`Library ${id} (${lib.name}) removed; pool ${pool?.name ?? lib.home_pool} is free`);

    const rebooting = wasLive && pool !== undefined;
    if (rebooting) {
      await ctx.step('The library was served: the appliance reboots now');
      ctx.announceReboot();
      // The node reboots its own host, after this answer is recorded.
      ctx.afterFinish(async () => {
        await runNodeOp(
          store,
          {
            kind: 'reboot',
            node: pool.node,
            params: { reason: `library ${id} (${lib.name}) deleted` },
            requestedBy: `delete_library#${op.id}`,
          },
          ERASE_TIMEOUT_MS,
        );
      });
    }
    const result: DeleteLibraryResponse = {
      ok: true,
      library: id,
      name: lib.name,
      cartridges_deleted: carts.length - skipped.length,
      skipped,
      rebooting,
    };
    return result;
  };
}
