import { isoNow, type CatalogEntry } from '@vtl/api';
import type { ScannedGeneration } from '@vtl/offsite';

/** The catalog entries (§2.18) of scanned generations, synced now. */
export function catalogEntries(remoteId: number, scanned: ScannedGeneration[]): CatalogEntry[] {
  const now = isoNow();
  return scanned.map((g) => ({
    remote_id: remoteId,
    system_name: g.system,
    library_serial: g.library_serial,
    cart_label: g.label,
    generation: g.generation,
    logical_bytes: g.logical_bytes,
    stored_bytes: g.stored_bytes,
    chunk_count: g.chunk_count,
    exported_at: g.exported_at,
    synced_at: now,
  }));
}
