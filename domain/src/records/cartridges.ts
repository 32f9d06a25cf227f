import { CartridgeSpec, VtlError, badRequest, conflict, keys, notFound } from '@vtl/api';
import type { Store } from '@vtl/store';
import { readLabelClaim } from './jobs.js';

/**
 * The cartridge records (keys.cartridges): the only module that writes them. Its rules: a label
 * is minted only where it is absent; a delete is first a mark (`deleting`), compared with the
 * label's job claim so a delete and a job cannot both win, and the record goes only once its
 * node erased the image, unless it changed meanwhile; an import records the cartridge it placed
 * only where the label is free; last_export_gen only grows; a library delete removes its
 * cartridges after erasing them.
 */

/** Cartridges written per etcd transaction (etcd allows 128 operations by default). */
const MINT_TXN_CHUNK = 100;

/**
 * Mints cartridges (POST /api/cartridges): each record only where its label is absent. A label
 * taken meanwhile stops the batch with what was already created in the error's details.
 */
export async function mintCartridges(store: Store, planned: CartridgeSpec[]): Promise<void> {
  for (let i = 0; i < planned.length; i += MINT_TXN_CHUNK) {
    const txn = store.transaction();
    for (const c of planned.slice(i, i + MINT_TXN_CHUNK))
      txn.ifAbsent(keys.cartridges.one(c.label)).put(keys.cartridges.one(c.label), c);
    if (!(await txn.commit()))
      throw new VtlError('internal', 'A label was taken while minting; the batch stopped part way.', {
        created: planned.slice(0, i).map((c) => ({ label: c.label, slot: c.home_slot })),
      });
  }
}

/**
 * Marks a cartridge for deletion in one transaction comparing the record and the label's job
 * claim as checked: of N racing deletes one wins, the rest get 409; an export admitted at the
 * same moment makes the delete lose instead of both going ahead.
 */
export async function markCartridgeDeleting(store: Store, label: string): Promise<void> {
  const key = keys.cartridges.one(label);
  const found = await store.get(key, CartridgeSpec);
  if (!found) throw notFound(`No cartridge ${label}; GET /api/cartridges lists them.`);
  if (found.value.deleting)
    throw conflict(`${label} is being deleted already; GET /api/cartridges shows when it is gone.`);
  const claim = await readLabelClaim(store, label);
  if (claim.busy)
    throw badRequest(`${label} is referenced by job(s) ${claim.busy.id}; wait for or cancel them.`);
  const txn = store.transaction().ifModRevision(key, found.modRevision);
  claim.guard(txn);
  if (!(await txn.put(key, { ...found.value, deleting: true }).commit()))
    throw conflict(
      `${label} changed while this delete ran (another delete or a job); GET /api/cartridges/${label}, then retry.`,
    );
}

/**
 * Removes a cartridge marked deleting once its node erased the image; only the record as read
 * (`modRevision`), so a change meanwhile keeps it. False when it was not removed.
 */
export async function removeDeletedCartridge(
  store: Store,
  label: string,
  modRevision: string,
): Promise<boolean> {
  return store.delete(keys.cartridges.one(label), { modRevision });
}

/** Removes a cartridge of a library being deleted, after its image was erased (library delete). */
export async function removeLibraryCartridge(store: Store, label: string): Promise<void> {
  await store.delete(keys.cartridges.one(label));
}

/**
 * Records the cartridge an import placed in its library, only where the label is still free;
 * the record follows the image, so the cartridge reconciler finds it present and mints nothing.
 * False when a record of that label exists already.
 */
export async function recordImportedCartridge(store: Store, cart: CartridgeSpec): Promise<boolean> {
  return (await store.create(keys.cartridges.one(cart.label), cart)) !== undefined;
}

/** Records the generation an export produced on the cartridge (§2.7 last_export_gen); it only grows. */
export async function setLastExportGen(store: Store, label: string, generation: string): Promise<void> {
  await store.update(keys.cartridges.one(label), CartridgeSpec, (c) =>
    c && c.last_export_gen < generation ? { ...c, last_export_gen: generation } : undefined,
  );
}
