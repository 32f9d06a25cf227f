import { CARTRIDGE_LABEL, LTO_GENERATIONS, badRequest } from '@vtl/api';
import type { DataPlane, LibraryRuntime } from './dataplane.js';
import type { MintResult } from './control/protocol.js';
import { formatLocation } from './inventory/elements.js';
import { isMediaError } from './media/errors.js';
import { deleteCartridge } from './media/image.js';
import { cartridgeDir, readMeta } from './media/layout.js';
import { mintCartridge } from './media/mint.js';

/** Barcodes are upper-case inside the emulator; the boundary normalises. */
export function normaliseLabel(input: string): string {
  const label = input.trim().toUpperCase();
  if (!CARTRIDGE_LABEL.test(label)) {
    throw badRequest(`label "${input}" must be six A-Z0-9 characters plus a media suffix such as L8`);
  }
  return label;
}

/**
 * Generation of the medium a label names (its L<n> suffix). LTO drives write their own
 * generation and the one before, so other media would be unusable in this library.
 */
export function mediumGeneration(label: string, lib: LibraryRuntime): number {
  const gen = Number(label.slice(7));
  const driveGen = lib.config.generation;
  if (!LTO_GENERATIONS.some((g) => g.gen === gen) || (gen !== driveGen && gen !== driveGen - 1)) {
    throw badRequest(
      `LTO-${driveGen} drives cannot write ${label.slice(6)} media; use suffix L${driveGen} or L${driveGen - 1}`,
    );
  }
  return gen;
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
    await mintCartridge({ mediaDir: lib.config.media_dir, label, generation });
  } catch (err) {
    if (!isMediaError(err, 'exists')) throw err;
    const meta = await readMeta(dir);
    dp.logger.warn({ label, library: libraryId, stub: meta.stub }, 'reusing an image no slot held');
  }
  await inv.place(label, target);
  return { label, slot: target };
}

/** Deletes a cartridge: out of the inventory first (refused while loaded), then its image. */
export async function remove(
  dp: DataPlane,
  libraryId: number,
  rawLabel: string,
): Promise<Record<string, never>> {
  const lib = dp.library(libraryId);
  const label = normaliseLabel(rawLabel);
  await lib.inventory.remove(label);
  // Also when the inventory had forgotten it already: a retried remove finishes the delete.
  await deleteCartridge(cartridgeDir(lib.config.media_dir, label));
  return {};
}
