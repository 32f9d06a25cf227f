import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VtlError } from '@vtl/api/base';
import { isErrno } from '../media/errors.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import { formatLocation, parseLocation, storageSlot, type ElementRef } from './elements.js';

export const INVENTORY_FILE = 'inventory.json';

export interface LibraryGeometry {
  id: number;
  numSlots: number;
  numIe: number;
  numDrives: number;
  /** Pool directory: cartridge images and inventory.json live here. */
  mediaDir: string;
}

/** Where every cartridge is. '' = empty. Index i of `storage`/`ie` is slot i+1. */
export interface InventoryState {
  storage: string[];
  ie: string[];
  drives: { label: string; source: ElementRef | undefined }[];
}

interface InventoryFileV1 {
  format: 1;
  library: number;
  storage: string[];
  ie: string[];
  drives: { label: string; source: string }[];
}

export function emptyInventory(g: LibraryGeometry): InventoryState {
  return {
    storage: Array<string>(g.numSlots).fill(''),
    ie: Array<string>(g.numIe).fill(''),
    drives: Array.from({ length: g.numDrives }, () => ({ label: '', source: undefined })),
  };
}

export function cloneInventory(s: InventoryState): InventoryState {
  return { storage: [...s.storage], ie: [...s.ie], drives: s.drives.map((d) => ({ ...d })) };
}

/** Reads inventory.json (an empty library when there is none) and fits it to the geometry. */
export async function loadInventory(g: LibraryGeometry): Promise<{ state: InventoryState; notes: string[] }> {
  const path = join(g.mediaDir, INVENTORY_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { state: emptyInventory(g), notes: [] };
    throw err;
  }
  let file: InventoryFileV1;
  try {
    file = JSON.parse(text) as InventoryFileV1;
  } catch {
    throw new VtlError('internal', `${path} is not valid JSON; restore it from the last good copy`);
  }
  if (
    file.format !== 1 ||
    !Array.isArray(file.storage) ||
    !Array.isArray(file.ie) ||
    !Array.isArray(file.drives)
  ) {
    throw new VtlError('internal', `${path} has an unknown format`);
  }
  const state: InventoryState = {
    storage: file.storage,
    ie: file.ie,
    drives: file.drives.map((d) => ({ label: d.label, source: parseLocation(d.source) })),
  };
  return fitGeometry(state, g);
}

/** Atomic replace: a crash leaves the previous or the new inventory, never a torn one. */
export async function saveInventory(g: LibraryGeometry, s: InventoryState): Promise<void> {
  const file: InventoryFileV1 = {
    format: 1,
    library: g.id,
    storage: s.storage,
    ie: s.ie,
    drives: s.drives.map((d) => ({ label: d.label, source: d.source ? formatLocation(d.source) : '' })),
  };
  await writeFileAtomic(join(g.mediaDir, INVENTORY_FILE), `${JSON.stringify(file, null, 1)}\n`);
}

/**
 * Resizes a stored inventory to the configured geometry. A cartridge whose slot or drive no
 * longer exists moves to the first empty storage (then I/E) slot rather than being forgotten;
 * a label found twice keeps its first place. Returns what it changed, for the log.
 */
export function fitGeometry(
  stored: InventoryState,
  g: LibraryGeometry,
): { state: InventoryState; notes: string[] } {
  const state = emptyInventory(g);
  const notes: string[] = [];
  const seen = new Set<string>();
  const homeless: string[] = [];
  const keep = (label: string, where: string, fits: boolean): boolean => {
    if (!label) return false;
    if (seen.has(label)) {
      notes.push(`${label} listed twice; kept its first place, dropped ${where}`);
      return false;
    }
    seen.add(label);
    if (!fits) homeless.push(label);
    return fits;
  };
  stored.storage.forEach((label, i) => {
    if (keep(label, `slot:${i + 1}`, i < g.numSlots)) state.storage[i] = label;
  });
  stored.ie.forEach((label, i) => {
    if (keep(label, `ie:${i + 1}`, i < g.numIe)) state.ie[i] = label;
  });
  stored.drives.forEach((d, i) => {
    if (keep(d.label, `drive:${i}`, i < g.numDrives))
      state.drives[i] = { label: d.label, source: fitSource(d.source, g) };
  });
  for (const label of homeless) {
    const s = state.storage.indexOf('');
    const e = state.ie.indexOf('');
    if (s >= 0) state.storage[s] = label;
    else if (e >= 0) state.ie[e] = label;
    else throw new VtlError('internal', `library ${g.id} has no room for ${label} after its geometry shrank`);
    notes.push(
      `${label} moved to ${formatLocation(s >= 0 ? storageSlot(s + 1) : { kind: 'ie', num: e + 1 })}`,
    );
  }
  return { state, notes };
}

function fitSource(source: ElementRef | undefined, g: LibraryGeometry): ElementRef | undefined {
  if (!source) return undefined;
  if (source.kind === 'storage' && source.num >= 1 && source.num <= g.numSlots) return source;
  if (source.kind === 'ie' && source.num >= 1 && source.num <= g.numIe) return source;
  return undefined;
}
