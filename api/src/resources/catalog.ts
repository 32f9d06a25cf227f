import { z } from 'zod';
import { TEXT_LIMITS, displayText, plainText } from '../text.js';

/** §2.18: one exported generation a bucket holds, cached at keys.catalog. */
export const CatalogEntry = z.object({
  remote_id: z.number().int(),
  system_name: z.string(),
  library_serial: z.string(),
  cart_label: z.string(),
  generation: z.string(),
  logical_bytes: z.number().int(),
  stored_bytes: z.number().int(),
  chunk_count: z.number().int(),
  exported_at: z.string(),
  synced_at: z.string(),
});
export type CatalogEntry = z.infer<typeof CatalogEntry>;

export const CatalogQuery = z.object({
  remote_id: z.coerce
    .number({ error: 'remote_id is required: GET /api/catalog?remote_id=<id>' })
    .int()
    .positive('remote_id is required: GET /api/catalog?remote_id=<id>'),
});

export const CatalogRebuildRequest = z.strictObject({ remote_id: z.number().int().positive() });
export const CatalogRebuildResponse = z.object({
  complete: z.number().int(),
  incomplete: z.array(
    z.object({ system: z.string(), library: z.string(), label: z.string(), generation: z.string() }),
  ),
});

/** POST /api/libraries/recover (§4.6 rule 5). */
export const RecoverRequest = z.strictObject({
  remote_id: z.number().int().positive(),
  system_name: plainText('system_name', TEXT_LIMITS.name).min(1, 'system_name is required'),
  library_serial: plainText('library_serial', TEXT_LIMITS.name).min(1, 'library_serial is required'),
  pool_id: z.number().int().positive(),
  name: displayText('name', TEXT_LIMITS.name).optional(),
});
export const RecoverResponse = z.object({
  library: z.number().int(),
  serial: z.string(),
  name: z.string(),
  drive_serials: z.array(z.string()),
  /** Cartridges the topology lists. */
  carts: z.number().int(),
  import_jobs: z.array(z.number().int()),
  steps: z.array(z.string()),
});
