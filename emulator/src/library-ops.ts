import { rename } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { CARTRIDGE_LABEL, VtlError, badRequest, mediaSuffix, parseMediaSuffix } from '@vtl/api/base';
import { fsyncDir } from './util/atomic-file.js';
import type { DataPlane, LibraryRuntime } from './dataplane.js';
import type { MintResult } from './control/protocol.js';
import { formatLocation, storageSlot } from './inventory/elements.js';
import { isErrno, isMediaError } from './media/errors.js';
import { deleteCartridge, makeStub } from './media/image.js';
import { cartridgeDir, readMeta } from './media/layout.js';
import { mintCartridge, placeStaged, stageCartridge } from './media/mint.js';
import { syncFilesystem, withDeferredSync } from './util/deferred-sync.js';

/** Barcodes are upper-case inside the emulator; the boundary normalises. */
export function normaliseLabel(input: string): string {
  const label = input.trim().toUpperCase();
  if (!CARTRIDGE_LABEL.test(label)) {
    throw badRequest(`label "${input}" must be six A-Z0-9 characters plus a media suffix such as L8`);
  }
  return label;
}

/**
 * Generation of the medium a label names (its media identifier: L<n>, LA, or a WORM one).
 * LTO drives write their own generation and, up to LTO-9, the one before, so other media
 * would be unusable in this library.
 */
export function mediumGeneration(label: string, lib: LibraryRuntime): number {
  const media = parseMediaSuffix(label.slice(6));
  const driveGen = lib.config.generation;
  const writable = driveGen >= 10 ? [driveGen] : [driveGen, driveGen - 1];
  if (!media || !writable.includes(media.gen)) {
    const suffixes = writable.map((g) => mediaSuffix(g)).join(' or ');
    throw badRequest(`LTO-${driveGen} drives cannot write ${label.slice(6)} media; use suffix ${suffixes}`);
  }
  return media.gen;
}

/**
 * Mints a labelled cartridge into a storage slot (0 = first empty one). Idempotent when the
 * label already sits in that slot; an image left by an interrupted mint is reused, not lost.
 */
export async function mint(
  dp: DataPlane,
  libraryId: number,
  rawLabel: string,
  slot: number,
): Promise<MintResult> {
  const lib = dp.library(libraryId);
  const label = normaliseLabel(rawLabel);
  const inv = lib.inventory;
  const at = inv.whereIs(label);
  if (at?.kind === 'storage' && (slot === 0 || at.num === slot)) return { label, slot: at.num };
  if (at) throw badRequest(`${label} is already in library ${libraryId} at ${formatLocation(at)}`);
  for (const other of dp.libraries.values()) {
    const there = other.inventory.whereIs(label);
    if (there) throw badRequest(`${label} is already in library ${other.config.id}; labels are unique`);
  }
  const target = slot === 0 ? inv.firstEmptyStorage() : slot;
  if (target === undefined) throw badRequest(`library ${libraryId} has no empty storage slot`);
  if (!Number.isInteger(target) || target < 1 || target > lib.config.num_slots) {
    throw badRequest(
      `library ${libraryId} has storage slots 1..${lib.config.num_slots}; slot ${slot} is not one`,
    );
  }
  const held = inv.labelAt({ kind: 'storage', num: target });
  if (held) throw badRequest(`slot ${target} of library ${libraryId} holds ${held}; choose an empty slot`);
  const generation = mediumGeneration(label, lib);
  const dir = cartridgeDir(lib.config.media_dir, label);
  try {
    await mintCartridge({ mediaDir: lib.config.media_dir, label, generation, worm: isWormLabel(label) });
  } catch (err) {
    if (!isMediaError(err, 'exists')) throw err;
    const meta = await readMeta(dir);
    dp.logger.warn({ label, library: libraryId, stub: meta.stub }, 'reusing an image no slot held');
  }
  await inv.place(label, target);
  return { label, slot: target };
}

/** The media identifier says WORM (LT..LZ): such a cartridge is minted write-once. */
const isWormLabel = (label: string) => parseMediaSuffix(label.slice(6))?.worm === true;

/** Images created at once by mintBatch: enough to overlap the syncs, few enough not to swamp the disk. */
const MINT_PARALLEL = 16;

/** One item of a batch mint: placed, or refused with the reason mint() would have given. */
export type MintBatchItem =
  MintResult | { label: string; slot: number; error: { code: string; message: string } };

/**
 * Mints many cartridges into one library: images are created in parallel batches and all are
 * placed with one inventory write. Every item is checked as mint() checks it and answered on
 * its own, so one bad label does not stop the others.
 */
export async function mintBatch(
  dp: DataPlane,
  libraryId: number,
  items: readonly { label: string; slot: number }[],
): Promise<MintBatchItem[]> {
  const lib = dp.library(libraryId);
  const results = new Map<number, MintBatchItem>();
  const refuse = (i: number, label: string, slot: number, err: unknown) => {
    const code = err instanceof VtlError ? err.code : 'internal';
    results.set(i, { label, slot, error: { code, message: (err as Error).message } });
  };
  const elsewhere = new Set<string>();
  for (const other of dp.libraries.values())
    if (other !== lib) for (const c of other.inventory.cartridges()) elsewhere.add(c.label);
  const todo: { i: number; label: string; slot: number; generation: number }[] = [];
  items.forEach(({ label: raw, slot }, i) => {
    try {
      const label = normaliseLabel(raw);
      if (elsewhere.has(label)) throw badRequest(`${label} is already in another library; labels are unique`);
      if (!Number.isInteger(slot) || slot < 1 || slot > lib.config.num_slots)
        throw badRequest(
          `library ${libraryId} has storage slots 1..${lib.config.num_slots}; slot ${slot} is not one`,
        );
      todo.push({ i, label, slot, generation: mediumGeneration(label, lib) });
    } catch (err) {
      refuse(i, raw, slot, err);
    }
  });
  const placed = new Set(lib.inventory.cartridges().map((c) => c.label));
  const mediaDir = lib.config.media_dir;
  // Images are built without per-file fsyncs, made durable with one filesystem sync, and only
  // then renamed into place: a crash leaves complete images or hidden temp directories.
  const staged = new Map<number, string>();
  await withDeferredSync(async () => {
    for (let start = 0; start < todo.length; start += MINT_PARALLEL) {
      await Promise.all(
        todo.slice(start, start + MINT_PARALLEL).map(async (t) => {
          if (placed.has(t.label)) return; // placeMany says whether it sits in the asked slot
          try {
            staged.set(
              t.i,
              await stageCartridge({
                mediaDir,
                label: t.label,
                generation: t.generation,
                worm: isWormLabel(t.label),
              }),
            );
          } catch (err) {
            refuse(t.i, t.label, t.slot, err);
          }
        }),
      );
    }
  });
  if (staged.size > 0) {
    await syncFilesystem(mediaDir);
    for (const t of todo) {
      const tmp = staged.get(t.i);
      if (!tmp) continue;
      // An image left by an interrupted mint is reused, as mint() does.
      await placeStaged(mediaDir, t.label, tmp).catch((err: unknown) => {
        if (!isMediaError(err, 'exists')) refuse(t.i, t.label, t.slot, err);
      });
    }
    await fsyncDir(mediaDir);
  }
  const minted = todo.filter((t) => !results.has(t.i));
  const refused = await lib.inventory.placeMany(minted);
  for (const t of minted) {
    const err = refused.get(t.label);
    if (err) refuse(t.i, t.label, t.slot, err);
    else results.set(t.i, { label: t.label, slot: t.slot });
  }
  return items.map((_, i) => results.get(i)!);
}

/** Deletes a cartridge: out of the inventory first (refused while loaded), then its image. */
export async function remove(
  dp: DataPlane,
  libraryId: number,
  rawLabel: string,
): Promise<Record<string, never>> {
  const lib = dp.library(libraryId);
  const label = normaliseLabel(rawLabel);
  // The image changes outside a drive: its kept status figures are stale from here.
  dp.forgetStats(cartridgeDir(lib.config.media_dir, label));
  await lib.inventory.remove(label);
  // Also when the inventory had forgotten it already: a retried remove finishes the delete.
  await deleteCartridge(cartridgeDir(lib.config.media_dir, label));
  return {};
}

/** Holds a cartridge out of the drives for the length of `work`, then lets it go again. */
async function whileHeld<T>(
  lib: LibraryRuntime,
  label: string,
  holder: string,
  work: () => Promise<T>,
): Promise<T> {
  if (!lib.inventory.whereIs(label)) throw badRequest(`${label} is not in library ${lib.config.id}`);
  await lib.inventory.hold(label, holder);
  try {
    return await work();
  } finally {
    await lib.inventory.release(label);
  }
}

/**
 * Evicts: the image becomes a labelled stub (data and index deleted). The caller has verified
 * the bucket copy; refused while the cartridge is in a drive. Idempotent.
 */
export async function evict(
  dp: DataPlane,
  libraryId: number,
  rawLabel: string,
): Promise<Record<string, never>> {
  const lib = dp.library(libraryId);
  const label = normaliseLabel(rawLabel);
  // The image changes outside a drive: its kept status figures are stale from here.
  dp.forgetStats(cartridgeDir(lib.config.media_dir, label));
  await whileHeld(lib, label, 'evict', () => makeStub(cartridgeDir(lib.config.media_dir, label)));
  return {};
}

/**
 * Swaps in an image unpacked in `staging` (a directory beside the cartridges, same filesystem):
 * the old image is renamed aside, the staged one renamed into place, then the old one deleted,
 * so a crash leaves either image whole. Refused while the cartridge is in a drive.
 */
export async function swapIn(
  dp: DataPlane,
  libraryId: number,
  rawLabel: string,
  staging: string,
): Promise<Record<string, never>> {
  const lib = dp.library(libraryId);
  const label = normaliseLabel(rawLabel);
  // The image changes outside a drive: its kept status figures are stale from here.
  dp.forgetStats(cartridgeDir(lib.config.media_dir, label));
  const { mediaDir, staged } = await checkStaging(lib, label, staging);
  await whileHeld(lib, label, 'import', async () => {
    const dir = cartridgeDir(mediaDir, label);
    const aside = `${staged}.old`;
    // A retry after a crash between the renames finds the old image already aside.
    await rename(dir, aside).catch((err: unknown) => {
      if (!isErrno(err, 'ENOENT')) throw err;
    });
    await rename(staged, dir);
    await fsyncDir(mediaDir);
    await deleteCartridge(aside);
  });
  return {};
}

/** A staged image must sit beside the cartridges (same filesystem, hidden) and hold that label's data. */
async function checkStaging(lib: LibraryRuntime, label: string, staging: string) {
  const mediaDir = resolve(lib.config.media_dir);
  const staged = resolve(staging);
  if (dirname(staged) !== mediaDir || !basename(staged).startsWith('.'))
    throw badRequest(`staging must be a hidden directory directly in ${mediaDir}`);
  const meta = await readMeta(staged);
  if (meta.label !== label) throw badRequest(`staging holds ${meta.label}, not ${label}`);
  if (meta.stub) throw badRequest(`staging holds a stub of ${label}, not its data`);
  return { mediaDir, staged };
}

/**
 * Import into a library (§4.5 rule 6): the staged image becomes the cartridge and appears in the
 * first empty import/export slot, or in storage slot `slot` when given and free (recovery puts
 * cartridges back in their home slots). A retry after the rename finds the image in place.
 */
export async function placeInIe(
  dp: DataPlane,
  libraryId: number,
  rawLabel: string,
  staging: string,
  slot = 0,
): Promise<{ location: string }> {
  const lib = dp.library(libraryId);
  const label = normaliseLabel(rawLabel);
  // The image changes outside a drive: its kept status figures are stale from here.
  dp.forgetStats(cartridgeDir(lib.config.media_dir, label));
  mediumGeneration(label, lib); // the library's drives must be able to read it
  for (const other of dp.libraries.values())
    if (other !== lib && other.inventory.whereIs(label))
      throw badRequest(`${label} is already in library ${other.config.id}; labels are unique`);
  const dir = cartridgeDir(lib.config.media_dir, label);
  const existing = await readMeta(dir).catch(() => undefined);
  if (!existing) {
    const { mediaDir, staged } = await checkStaging(lib, label, staging);
    await rename(staged, dir);
    await fsyncDir(mediaDir);
  } else if (existing.stub) throw badRequest(`${label} exists here as a stub; import it in place instead`);
  const inv = lib.inventory;
  const at = inv.whereIs(label);
  if (at) return { location: formatLocation(at) };
  if (slot >= 1 && slot <= lib.config.num_slots && !inv.labelAt(storageSlot(slot))) {
    await inv.place(label, slot);
    return { location: `slot:${slot}` };
  }
  return { location: `ie:${await inv.placeInIe(label)}` };
}

/**
 * After the I/E-slot watcher's export verified: the cartridge goes from its import/export slot
 * back into storage slot `slot` (its home), or the first empty one when that is taken.
 * Idempotent: a cartridge already in storage stays where it is.
 */
export async function returnToSlot(
  dp: DataPlane,
  libraryId: number,
  rawLabel: string,
  slot: number,
): Promise<{ slot: number }> {
  const lib = dp.library(libraryId);
  const label = normaliseLabel(rawLabel);
  const inv = lib.inventory;
  const at = inv.whereIs(label);
  if (!at) throw badRequest(`${label} is not in library ${libraryId}`);
  if (at.kind === 'storage') return { slot: at.num };
  if (at.kind !== 'ie')
    throw badRequest(`${label} is in ${formatLocation(at)}, not in an import/export slot`);
  const home =
    slot >= 1 && slot <= lib.config.num_slots && !inv.labelAt(storageSlot(slot))
      ? slot
      : inv.firstEmptyStorage();
  if (home === undefined) throw badRequest(`library ${libraryId} has no empty storage slot for ${label}`);
  await inv.move(at, storageSlot(home), 'api');
  return { slot: home };
}
