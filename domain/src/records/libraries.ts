import { LibrarySpec, badRequest, conflict, keys, type ManagedBy } from '@vtl/api';
import { z } from 'zod';
import type { IdClaim, Store, Txn } from '@vtl/store';
import { submitExclusiveOp } from './exclusive-op.js';
import { releaseThrough, withManagedBy } from './managed-by.js';
import type { SubmitOp } from './ops.js';

/**
 * The library records (keys.libraries) and their claims (keys.poolHome: the one library a pool
 * homes; keys.librarySerial: serials are unique here): the only module that writes them. A
 * library is declared in one transaction with its id (the counter is bumped there, so a refused
 * declare leaves it), its pool's claim and its serial's; it is removed with both claims and its
 * status, so the pool is free again in the same instant. A GitOps source claims a library it
 * declares (managed_by, records/managed-by.ts) and releases it when the source is deleted.
 */

/** Transaction attempts of one declare; a lost one (another declare took the id) re-plans. */
const DECLARE_ATTEMPTS = 8;

/** Builds the record of a new library given its id; throws the request's refusal. */
export type PlanLibrary = (id: number) => LibrarySpec | Promise<LibrarySpec>;

/** A planned library and the part of a transaction that declares it. */
interface Declaration {
  lib: LibrarySpec;
  write: (txn: Txn) => void;
}

async function prepareDeclare(store: Store, next: IdClaim, plan: PlanLibrary): Promise<Declaration> {
  const lib = await plan(next.id);
  if (await store.get(keys.poolHome(lib.home_pool), z.unknown()))
    throw badRequest(`Pool ${lib.home_pool} was just claimed by another library; use a free pool.`);
  if (await store.get(keys.librarySerial(lib.serial), z.unknown()))
    throw badRequest(
      `A library with serial ${lib.serial} exists here already; recover restores only missing libraries.`,
    );
  return {
    lib,
    write: (txn) => {
      next.take(txn);
      txn
        .ifAbsent(keys.poolHome(lib.home_pool))
        .ifAbsent(keys.librarySerial(lib.serial))
        .put(keys.poolHome(lib.home_pool), lib.id)
        .put(keys.librarySerial(lib.serial), lib.id)
        .put(keys.libraries.one(lib.id), lib);
    },
  };
}

/** Declares a library (POST /api/libraries): its record, id and claims in one transaction. */
export async function declareLibrary(store: Store, plan: PlanLibrary): Promise<LibrarySpec> {
  const declared = await store.withNewId('libraries', DECLARE_ATTEMPTS, async (next) => {
    const { lib, write } = await prepareDeclare(store, next, plan);
    const txn = store.transaction();
    write(txn);
    return (await txn.commit()) ? lib : undefined;
  });
  if (!declared) throw conflict('Libraries kept being declared meanwhile; retry.');
  return declared;
}

/**
 * Declares a library together with the apply that activates it (a recovery), in one
 * transaction: the apply is an exclusive operation (records/exclusive-op.ts), so of a recovery
 * and an apply, library delete or job racing, exactly one goes ahead. `also` adds the caller's
 * own record of what it did (the recovery's progress) to that transaction.
 */
export async function declareLibraryWithApply(
  store: Store,
  plan: PlanLibrary,
  apply: SubmitOp,
  what: string,
  also: (lib: LibrarySpec, applyId: number) => Promise<(txn: Txn) => void>,
): Promise<{ lib: LibrarySpec; applyId: number }> {
  let lib: LibrarySpec | undefined;
  const applyId = await submitExclusiveOp(store, apply, what, undefined, async (id) => {
    const declaration = await prepareDeclare(store, await store.peekId('libraries'), plan);
    lib = declaration.lib;
    const more = await also(declaration.lib, id);
    return (txn) => {
      declaration.write(txn);
      more(txn);
    };
  });
  if (!lib) throw new Error('unreachable: the exclusive op committed without its declaration');
  return { lib, applyId };
}

/** Marks a library `deleting` (library delete's first step); idempotent. */
export async function markLibraryDeleting(store: Store, id: number): Promise<void> {
  await store.update(keys.libraries.one(id), LibrarySpec, (cur) =>
    cur && !cur.deleting ? { ...cur, deleting: true } : undefined,
  );
}

/** Removes a library's record, status and claims in one transaction (library delete's last step). */
export async function removeLibrary(store: Store, lib: LibrarySpec): Promise<void> {
  await store
    .transaction()
    .delete(keys.libraries.one(lib.id))
    .delete(keys.libraryStatus.one(lib.id))
    .delete(keys.poolHome(lib.home_pool))
    .delete(keys.librarySerial(lib.serial))
    .commit();
}

/** Records the GitOps source that declares a library (records/managed-by.ts has the rule). */
export async function claimLibrary(store: Store, id: number, managed: ManagedBy): Promise<void> {
  const key = keys.libraries.one(id);
  await store.update(key, LibrarySpec, (cur) => withManagedBy(cur, managed, key));
}

/** Drops a deleted GitOps source's claim on a library; true when it held one. */
export async function releaseLibrary(store: Store, id: number, source: string): Promise<boolean> {
  return releaseThrough<LibrarySpec>(
    (mutate) => store.update(keys.libraries.one(id), LibrarySpec, mutate),
    source,
  );
}
