import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { isoNow } from '@vtl/api';
import { Requeue } from '@vtl/reconcile';
import type { JobStepContext, StepResult } from './job-context.js';
import { recordImportedCartridge, remoteConnection, updateJob } from '@vtl/domain';

const refOf = (ctx: JobStepContext) => ({
  system: ctx.job.system_name,
  library_serial: ctx.job.library_serial,
  label: ctx.job.label,
  generation: ctx.job.generation,
});

/** verifying (evict): the bucket copy must verify chunk by chunk before any local byte goes. */
export async function verifyAndEvict(ctx: JobStepContext): Promise<StepResult> {
  const { job, store } = ctx;
  const emulator = ctx.supervisor.emulator;
  if (!emulator) return { requeueAfterMs: Requeue.soon };
  const remote = await remoteConnection(store, job.remote_id);
  const manifest = await ctx.engine.verifyGeneration({
    remote,
    ref: refOf(ctx),
    codec: ctx.codec(),
    signal: ctx.signal,
  });
  await emulator.evict({ library: job.library, label: job.label });
  await ctx.publisher.publish();
  await updateJob(store, ctx.journal, job.id, 'verifying', () => ({
    state: 'succeeded',
    detail: `bucket copy ${job.generation} verified; local data deleted, labelled stub kept`,
    bytes_done: manifest.tar_bytes,
    chunks_done: manifest.chunks.length,
    stored_bytes: manifest.stored_bytes,
    finished_at: isoNow(),
  }));
}

/** Staging directories start with '.', so the emulator never takes them for cartridges. */
export const stagingDir = (mediaDir: string, label: string, job: number) =>
  path.join(mediaDir, `.import-${label}-${job}`);

/**
 * downloading (import): the generation is downloaded, verified and unpacked into a staging
 * directory on the same pool, then swapped in for the evicted stub, or (import into a library)
 * placed in the library's first empty import/export slot with its label. A retry starts the
 * staging over; the stub stays untouched until the swap.
 */
export async function downloadAndSwapIn(ctx: JobStepContext): Promise<StepResult> {
  const { job, store } = ctx;
  const emulator = ctx.supervisor.emulator;
  if (!emulator) return { requeueAfterMs: Requeue.soon };
  const remote = await remoteConnection(store, job.remote_id);
  const staging = stagingDir(ctx.library.media_dir, job.label, job.id);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  // Progress arrives synchronously per chunk; writes are chained so they land in order.
  let progressWrites: Promise<unknown> = Promise.resolve();
  try {
    const manifest = await ctx.engine.importCartridge({
      remote,
      ref: refOf(ctx),
      dir: staging,
      codec: ctx.codec(),
      signal: ctx.signal,
      onProgress: (p) => {
        progressWrites = progressWrites.then(() =>
          updateJob(store, ctx.journal, job.id, 'downloading', () => ({
            ...p,
            detail: `downloaded ${p.chunks_done} chunks`,
          })).catch((err: unknown) => ctx.log.warn({ err }, 'progress not recorded')),
        );
      },
    });
    await progressWrites;
    let where = 'swapped in';
    if (job.target_library > 0) {
      const { location } = await emulator.placeInIe({
        library: job.library,
        label: job.label,
        staging,
        ...(job.home_slot > 0 ? { slot: job.home_slot } : {}),
      });
      where = `placed in ${location.replace(':', ' ')}`;
      await recordImportedCartridge(store, {
        label: job.label,
        library: job.library,
        home_slot: job.home_slot,
        created_at: isoNow(),
        deleting: false,
        last_export_gen: job.generation,
      });
    } else await emulator.swapIn({ library: job.library, label: job.label, staging });
    // Consumed by the emulator; a retry that found the image already placed leaves it behind.
    await rm(staging, { recursive: true, force: true });
    await ctx.publisher.publish();
    // Before the job's success, so whoever sees the job succeeded finds the event too.
    await ctx.journal.emit({
      kind: 'cart_imported',
      subject: job.label,
      detail: `${job.label} generation ${job.generation} imported from remote ${job.remote_id}`,
      data: { label: job.label, library: job.library, remote_id: job.remote_id, generation: job.generation },
    });
    await updateJob(store, ctx.journal, job.id, 'downloading', () => ({
      state: 'succeeded',
      detail: `generation ${job.generation} verified and ${where}`,
      bytes_done: manifest.tar_bytes,
      chunks_done: manifest.chunks.length,
      logical_bytes: manifest.logical_bytes,
      stored_bytes: manifest.stored_bytes,
      finished_at: isoNow(),
    }));
  } catch (err) {
    await progressWrites;
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}
