import { z } from 'zod';
import { ObservedCartridge } from './live.js';

/**
 * Desired cartridge. The apiserver creates it on mint (reserving the label atomically) and
 * sets `deleting` on delete; the nodeagent that owns the library's pool realises it on disk
 * and in the emulator, and removes the record once a delete is done.
 */
export const CartridgeSpec = z.object({
  label: z.string(),
  library: z.number().int(),
  home_slot: z.number().int(),
  created_at: z.string(),
  deleting: z.boolean().default(false),
  /** Set by the job that last exported this label (issue 6). */
  last_export_gen: z.string().default(''),
});
export type CartridgeSpec = z.infer<typeof CartridgeSpec>;

/** §2.7, the top-level `cartridges[]` and GET /api/cartridges: what is observed plus the last export. */
export const Cartridge = ObservedCartridge.extend({ last_export_gen: z.string() });
export type Cartridge = z.infer<typeof Cartridge>;

/** The per-library `cartridges[]` of the status view carries the first six fields only. */
export const LibraryCartridge = Cartridge.pick({
  label: true,
  library: true,
  size_bytes: true,
  phys_bytes: true,
  modified: true,
  location: true,
});

export const MintRequest = z.strictObject({
  library: z.number().int().min(0).default(0),
  label: z.string().default(''),
  count: z.number().int().min(1, 'count must be at least 1').default(1),
  /** WORM cartridges: labels take the generation's WORM media identifier (LT..LZ). */
  worm: z.boolean().default(false),
});
export type MintRequest = z.infer<typeof MintRequest>;

export const MintResponse = z.object({
  library: z.number().int(),
  size_gb: z.number().int(),
  created: z.array(z.object({ label: z.string(), slot: z.number().int() })),
});
export type MintResponse = z.infer<typeof MintResponse>;

export const DeleteCartridgeRequest = z.strictObject({ confirm: z.string() });
export const DeleteCartridgeResponse = z.object({ ok: z.literal(true), label: z.string() });
export type DeleteCartridgeResponse = z.infer<typeof DeleteCartridgeResponse>;
