import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OffsiteError } from '../errors.js';

/**
 * Every file of a cartridge image, in tar order: emulator/src/media/layout.ts IMAGE_FILES
 * (meta.json, mam.json, index, data). The order is part of the bucket format.
 */
export const CARTRIDGE_FILES = ['meta.json', 'mam.json', 'index', 'data'] as const;
export type CartridgeFile = (typeof CARTRIDGE_FILES)[number];

/** The meta.json fields the manifest repeats (emulator CartridgeMeta). */
export interface CartridgeIdentity {
  label: string;
  generation: number;
  density: number;
  capacity_bytes: number;
  write_protected: boolean;
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
    stub: m.stub === true,
  };
}
