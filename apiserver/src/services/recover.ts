import {
  CatalogEntry,
  VtlError,
  badRequest,
  findDriveModel,
  findLibraryVariant,
  isoNow,
  keys,
  randomDriveSerial,
  type LibrarySpec,
  type RecoverRequest,
} from '@vtl/api';
import { loadSnapshot, type EventJournal, type Store } from '@vtl/store';
import { createJob, nodeOfLibrary, refuseWithActiveJobs } from '@vtl/domain';
import { readTopology } from '@vtl/offsite';
import { offsite } from './offsite.js';
import { remoteFailure } from './remote-errors.js';
import { z } from 'zod';
import { referencedRemote } from './jobs.js';
import { remoteConnection } from './remotes.js';

/** What a recovery declared and queued (§4.6 POST /api/libraries/recover). */
export interface RecoveryPlan {
  lib: LibrarySpec;
  carts: number;
  steps: string[];
}

/**
 * Recover, first half: checks the preconditions of §4.6 rule 5 (400 otherwise, nothing written)
 * and declares the library of the bucket's topology.json on the pool, with its original model,
 * geometry and serial; drives get new serials.
 */
export async function declareRecoveredLibrary(
  store: Store,
  journal: EventJournal,
  body: z.infer<typeof RecoverRequest>,
): Promise<RecoveryPlan> {
  const s = await loadSnapshot(store);
  refuseWithActiveJobs(s, 'Recover');
  if (
    s.libraries.some((l) => l.serial === body.library_serial) ||
    (await store.get(keys.librarySerial(body.library_serial), z.unknown()))
  )
    throw badRequest(
      `A library with serial ${body.library_serial} exists here already; recover restores only missing libraries.`,
    );
  const pool = s.pools.find((p) => p.id === body.pool_id);
  if (!pool) throw badRequest(`pool_id ${body.pool_id} names no pool; GET /api/pools lists them.`);
  if (s.poolStatus.get(pool.id)?.state !== 'active')
    throw badRequest(`Pool "${pool.name}" is not active; check its node (GET /api/pools shows why).`);
  const home = s.libraries.find((l) => l.home_pool === pool.id);
  if (home)
    throw badRequest(`Pool "${pool.name}" already homes library ${home.id} (${home.name}); use a free pool.`);
  await referencedRemote(store, body.remote_id);
  const conn = await remoteConnection(store, body.remote_id);
  const topology = await readTopology(conn, body.system_name, body.library_serial);
  if (!topology)
    throw badRequest(
      `No topology.json for ${body.system_name}/${body.library_serial} in remote ${body.remote_id}; check the names (GET /api/remotes/${body.remote_id}/objects). Exports before v0.7 have none.`,
    );
  const found = findLibraryVariant(topology.product);
  const drive = findDriveModel(topology.drive_product);
  if (!found || !drive)
    throw badRequest(
      `The topology names a model this appliance does not know (${topology.product}, ${topology.drive_product}).`,
    );

  const drives = new Set<string>();
  while (drives.size < topology.num_drives) drives.add(randomDriveSerial());
  const lib: LibrarySpec = {
    id: await store.nextId('libraries'),
    name: body.name || topology.name,
    vendor: topology.vendor || found.model.vendor,
    product: topology.product,
    variant: found.variant.display,
    serial: body.library_serial,
    drive_model: drive.product,
    drive_serials: [...drives],
    num_drives: topology.num_drives,
    num_slots: topology.num_slots,
    num_ie: topology.num_map,
    label_prefix: topology.label_prefix,
    media_dir: `${pool.path.replace(/\/$/, '')}/${body.library_serial}`,
    home_pool: pool.id,
    created_at: isoNow(),
    deleting: false,
  };
  const ok = await store
    .transaction()
    .ifAbsent(keys.poolHome(lib.home_pool))
    .ifAbsent(keys.librarySerial(lib.serial))
    .put(keys.poolHome(lib.home_pool), lib.id)
    .put(keys.librarySerial(lib.serial), lib.id)
    .put(keys.libraries.one(lib.id), lib)
    .commit();
  if (!ok) throw badRequest(`Pool ${lib.home_pool} or serial ${lib.serial} was just claimed; retry.`);
  await journal.emit({
    kind: 'library_created',
    subject: lib.name,
    detail: `recovered from remote ${body.remote_id}: ${lib.product}, ${lib.num_slots} slots, ${topology.cartridges.length} cartridges`,
    data: { library: lib.id, serial: lib.serial, recovered: true },
  });
  return {
    lib,
    carts: topology.cartridges.length,
    steps: [`Declared library ${lib.id} (${lib.name}) from topology.json`],
  };
}

/**
 * Recover, second half: refreshes the remote's catalog entries of the library from the bucket and
 * queues an import of each topology cartridge's newest generation into its home slot. Labels that
 * exist here already, or have no complete generation, are skipped with a step saying so.
 */
export async function queueRecoveryImports(
  store: Store,
  journal: EventJournal,
  body: z.infer<typeof RecoverRequest>,
  plan: RecoveryPlan,
  requestedBy: string,
): Promise<number[]> {
  const conn = await remoteConnection(store, body.remote_id);
  const [topology, scan] = await Promise.all([
    readTopology(conn, body.system_name, body.library_serial),
    offsite().scanBucket(conn),
  ]).catch((err: unknown) => {
    throw remoteFailure(
      err,
      'Reading the library from the bucket',
      `${conn.use_ssl ? 'https' : 'http'}://${conn.endpoint}`,
    );
  });
  const mine = scan.complete.filter(
    (g) => g.system === body.system_name && g.library_serial === body.library_serial,
  );
  const now = isoNow();
  for (const g of mine) {
    const entry: CatalogEntry = {
      remote_id: body.remote_id,
      system_name: g.system,
      library_serial: g.library_serial,
      cart_label: g.label,
      generation: g.generation,
      logical_bytes: g.logical_bytes,
      stored_bytes: g.stored_bytes,
      chunk_count: g.chunk_count,
      exported_at: g.exported_at,
      synced_at: now,
    };
    await store.put(
      keys.catalog.one(body.remote_id, g.system, g.library_serial, g.label, g.generation),
      entry,
    );
  }
  const s = await loadSnapshot(store);
  const jobs: number[] = [];
  for (const cart of topology?.cartridges ?? []) {
    const newest = mine
      .filter((g) => g.label === cart.label)
      .sort((a, b) => b.generation.localeCompare(a.generation))[0];
    if (!newest) {
      plan.steps.push(`${cart.label}: no complete generation in the bucket; not imported`);
      continue;
    }
    if (s.cartridges.some((c) => c.label === cart.label)) {
      plan.steps.push(`${cart.label}: a cartridge with this label exists here; not imported`);
      continue;
    }
    const job = await createJob(store, journal, {
      kind: 'import',
      state: 'queued',
      label: cart.label,
      library: plan.lib.id,
      remote_id: body.remote_id,
      generation: newest.generation,
      system_name: body.system_name,
      library_serial: body.library_serial,
      target_library: plan.lib.id,
      home_slot: cart.home_slot,
      node: nodeOfLibrary(s, plan.lib) ?? '',
      logical_bytes: newest.logical_bytes,
      stored_bytes: newest.stored_bytes,
      detail: 'queued by recovery',
      requested_by: requestedBy,
    });
    jobs.push(job.id);
  }
  plan.steps.push(`Queued ${jobs.length} imports`);
  return jobs;
}

/** The error of a failed activation, carrying what was created (§4.6 rule 5: 500). */
export function recoveryActivationFailed(
  err: unknown,
  lib: LibrarySpec,
  importJobs: number[],
  steps: string[],
): VtlError {
  const cause = err instanceof VtlError ? err : undefined;
  return new VtlError(
    'internal',
    `Library ${lib.id} was recovered but did not come up live (${cause?.message ?? String(err)}); it stays pending_restart. Apply it (POST /api/libraries/apply), then retry the imports.`,
    {
      library: lib.id,
      import_jobs: importJobs,
      steps: [...steps, ...((cause?.details?.steps as string[]) ?? [])],
    },
  );
}
