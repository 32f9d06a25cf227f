import path from 'node:path';
import {
  CartridgeSpec,
  Identity,
  LibrarySpec,
  POLICY_REQUESTERS,
  isoNow,
  keys,
  type CatalogEntry,
} from '@vtl/api';
import { Requeue } from '@vtl/reconcile';
import type { JobStepContext, StepResult } from './job-context.js';
import { readLedger } from './job-records.js';
import {
  finishExport,
  putCatalogEntries,
  recordExportChunk,
  remoteConnection,
  setLastExportGen,
  updateJob,
} from '@vtl/domain';
import { DEFAULT_CHUNK_BYTES, type LedgerEntry, type RemoteConnection } from './offsite.js';

const holder = (id: number) => `export job ${id}`;

/**
 * quiescing: holds the cartridge out of every drive (the emulator refuses while it is loaded),
 * then moves on to uploading. Until then the job waits with a detail that says why.
 */
export async function quiesce(ctx: JobStepContext): Promise<StepResult> {
  const { job } = ctx;
  const emulator = ctx.supervisor.emulator;
  const wait = async (why: string) => {
    const detail = `waiting: ${why}`;
    await updateJob(ctx.store, ctx.journal, job.id, 'quiescing', (j) =>
      j.detail === detail ? undefined : { detail },
    );
    return { requeueAfterMs: Requeue.soon };
  };
  if (!emulator) return wait('the tape emulator is not running on this node');
  try {
    await emulator.hold({ library: job.library, label: job.label, holder: holder(job.id) });
  } catch (err) {
    return wait(`${(err as Error).message}; the job goes on once the cartridge is idle and unloaded`);
  }
  await updateJob(ctx.store, ctx.journal, job.id, 'quiescing', () => ({
    state: 'uploading',
    detail: 'uploading',
  }));
}

/** The library's layout in the bucket (topology.json) so a recover can rebuild it. */
async function topologyOf(ctx: JobStepContext, lib: LibrarySpec) {
  const carts = (await ctx.store.list(keys.cartridges.prefix, CartridgeSpec)).items
    .map((i) => i.value)
    .filter((c) => c.library === lib.id && !c.deleting);
  return {
    format: 1 as const,
    system: ctx.job.system_name,
    library_serial: lib.serial,
    name: lib.name,
    product: lib.product,
    vendor: lib.vendor,
    drive_product: lib.drive_model,
    num_drives: lib.num_drives,
    num_slots: lib.num_slots,
    num_map: lib.num_ie,
    label_prefix: lib.label_prefix,
    written_at: isoNow(),
    cartridges: carts.map((c) => ({ label: c.label, home_slot: c.home_slot })),
  };
}

async function writeDescriptors(ctx: JobStepContext, remote: RemoteConnection) {
  const identity = (await ctx.store.get(keys.identity, Identity))?.value;
  await ctx.engine.writeTopology(remote, await topologyOf(ctx, ctx.library));
  await ctx.engine.writeSystemFile(remote, {
    format: 1 as const,
    system: ctx.job.system_name,
    uuid: identity?.system_uuid ?? '',
    version: ctx.version ?? 'v0.0.0',
    written_at: isoNow(),
  });
}

/**
 * uploading: streams the cartridge to the bucket, persisting the ledger after every verified
 * chunk so a restarted nodeagent resumes without re-sending them; then the descriptors, the
 * catalog record and last_export_gen, and the job succeeds. The hold is re-taken first because
 * an emulator restart forgets it.
 */
export async function upload(ctx: JobStepContext): Promise<StepResult> {
  const { job, store } = ctx;
  const emulator = ctx.supervisor.emulator;
  if (!emulator) return { requeueAfterMs: Requeue.soon };
  try {
    await emulator.hold({ library: job.library, label: job.label, holder: holder(job.id) });
  } catch (err) {
    await updateJob(store, ctx.journal, job.id, 'uploading', () => ({
      state: 'quiescing',
      detail: `waiting: ${(err as Error).message}`,
    }));
    return;
  }
  const remote = await remoteConnection(store, job.remote_id);
  const earlier = await readLedger(store, job.id);
  const ledger: LedgerEntry[] = earlier.entries;
  // Picked up again after a restart (a kill, an update): the row says it goes on, not over.
  if (ledger.length > 0)
    await updateJob(store, ctx.journal, job.id, 'uploading', () => ({
      detail: `resumed: ${ledger.length} chunks were verified before; sending the rest`,
    }));
  const chunkBytes = earlier.chunkBytes ?? ctx.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  const ref = {
    system: job.system_name,
    library_serial: job.library_serial,
    label: job.label,
    generation: job.generation,
  };
  const manifest = await ctx.engine.exportCartridge({
    remote,
    ref,
    dir: path.join(ctx.library.media_dir, job.label),
    ledger: [...ledger],
    codec: ctx.codec(),
    chunkBytes,
    signal: ctx.signal,
    onChunk: async (entry, progress) => {
      ledger.push(entry);
      await recordExportChunk(
        store,
        ctx.journal,
        job.id,
        { chunk_bytes: chunkBytes, entries: ledger },
        { ...progress, detail: `uploaded ${progress.chunks_done} chunks` },
      );
    },
  });
  await writeDescriptors(ctx, remote);
  const entry: CatalogEntry = {
    remote_id: job.remote_id,
    system_name: job.system_name,
    library_serial: job.library_serial,
    cart_label: job.label,
    generation: job.generation,
    logical_bytes: manifest.logical_bytes,
    stored_bytes: manifest.stored_bytes,
    chunk_count: manifest.chunks.length,
    exported_at: manifest.created_at ?? isoNow(),
    synced_at: isoNow(),
  };
  await putCatalogEntries(store, [entry]);
  await setLastExportGen(store, job.label, job.generation);
  // The job succeeds and its ledger goes in one transaction: no ledger outlives its export.
  await finishExport(store, ctx.journal, job.id, {
    detail: `exported ${manifest.chunks.length} chunks, ${manifest.stored_bytes} bytes stored`,
    bytes_done: manifest.tar_bytes,
    chunks_done: manifest.chunks.length,
    logical_bytes: manifest.logical_bytes,
    stored_bytes: manifest.stored_bytes,
    finished_at: isoNow(),
  });
  await emulator.release({ library: job.library, label: job.label });
  if (job.requested_by === POLICY_REQUESTERS.ieWatcher) await returnHome(ctx);
}

/** The I/E-slot watcher's export verified: the cartridge goes back to its storage slot (§2.13). */
async function returnHome(ctx: JobStepContext): Promise<void> {
  const { job, store } = ctx;
  const home = (await store.get(keys.cartridges.one(job.label), CartridgeSpec))?.value.home_slot ?? 0;
  try {
    const { slot } = await ctx.supervisor.emulator!.returnToSlot({
      library: job.library,
      label: job.label,
      slot: home,
    });
    await ctx.publisher.publish();
    ctx.log.info({ label: job.label, slot }, 'exported cartridge returned from the I/E slot');
  } catch (err) {
    // The export stands; the operator moves the cartridge (the host or an API load/unload).
    ctx.log.warn({ err, label: job.label }, 'exported cartridge left in the I/E slot');
  }
}
