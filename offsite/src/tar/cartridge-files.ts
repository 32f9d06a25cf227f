import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CARTRIDGE_BASE_FILES,
  MAX_PARTITIONS,
  cartridgeImageFiles,
  isCartridgeImageFile,
  metaPartitionCount,
} from '@vtl/api';
import { OffsiteError } from '../errors.js';

/**
 * The files every cartridge image has, in tar order (meta.json, mam.json, index, data); a
 * partitioned one adds each further partition's index and data after them. The one layout
 * definition is the api's cartridge-image.ts, which the emulator writes by; the order is part
 * of the bucket format.
 */
export const CARTRIDGE_FILES = CARTRIDGE_BASE_FILES;
export type CartridgeFile = (typeof CARTRIDGE_FILES)[number];

/** Every file of the image whose meta.json text this is, in tar order. */
export function filesOfMeta(metaText: string): string[] {
  let meta: { partitions?: unknown };
  try {
    meta = JSON.parse(metaText) as { partitions?: unknown };
  } catch {
    return [...CARTRIDGE_FILES];
  }
  return cartridgeImageFiles(Math.min(MAX_PARTITIONS, metaPartitionCount(meta)));
}

/** Every name a cartridge image may hold, for cleaning up a failed import. */
export const ALL_CARTRIDGE_FILES = cartridgeImageFiles(MAX_PARTITIONS);

export { isCartridgeImageFile };

/** The meta.json fields the manifest repeats (emulator CartridgeMeta). */
export interface CartridgeIdentity {
  label: string;
  generation: number;
  density: number;
  capacity_bytes: number;
  write_protected: boolean;
  /** A WORM cartridge: its bucket copy is written with Object Lock where the bucket has it. */
  worm: boolean;
  stub: boolean;
}

/** Reads meta.json of a cartridge directory; 'invalid' when it is missing or unreadable. */
export async function readIdentity(dir: string): Promise<CartridgeIdentity> {
  let text: string;
  try {
    text = await readFile(join(dir, 'meta.json'), 'utf8');
  } catch (err) {
    throw new OffsiteError('invalid', `no cartridge image at ${dir} (meta.json: ${(err as Error).message})`);
  }
  const meta = parseIdentity(text);
  if (!meta) throw new OffsiteError('invalid', `${join(dir, 'meta.json')} is not a cartridge meta.json`);
  return meta;
}

/** The identity in a meta.json text, or undefined when it is not one. */
export function parseIdentity(text: string): CartridgeIdentity | undefined {
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const label = typeof m.label === 'string' ? m.label : undefined;
  const generation = num(m.generation);
  const density = num(m.density);
  const capacity = num(m.capacity_bytes);
  if (label === undefined || generation === undefined || density === undefined || capacity === undefined) {
    return undefined;
  }
  return {
    label,
    generation,
    density,
    capacity_bytes: capacity,
    write_protected: m.write_protected === true,
    worm: m.worm === true,
    stub: m.stub === true,
  };
}
