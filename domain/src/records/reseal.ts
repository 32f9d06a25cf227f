import { z } from 'zod';
import type { Store } from '@vtl/store';

/** What re-sealing one family did. */
export interface Resealed {
  /** Records sealed again, and how many of them were still in clear (from before sealing). */
  resealed: number;
  migrated: number;
  /** Records written by someone else between the listing and the re-seal: left for the next pass. */
  changed: number;
}

/**
 * Re-seals one family's secrets (under prefix) that another key than kid sealed, or that are
 * still in clear: each is read through the store, which opens it with any key of the key file,
 * and written back unchanged by `write`, the owner module's compare-and-swap at the revision
 * read, which the store seals under the key file's first key. A record written meanwhile keeps
 * what was written: it is counted as changed, and a next pass finds it again if its new seal is
 * still not kid's. The writes stay in the owner module; this is the loop they share.
 */
export async function resealUnder(
  store: Store,
  prefix: string,
  kid: string,
  write: (key: string, value: unknown, modRevision: string) => Promise<boolean>,
): Promise<Resealed> {
  const out: Resealed = { resealed: 0, migrated: 0, changed: 0 };
  for (const s of await store.secretSeals(prefix)) {
    if (s.kid === kid) continue;
    const current = await store.get(s.key, z.unknown());
    if (!current) continue; // deleted meanwhile: nothing to seal
    if (current.modRevision !== s.modRevision || !(await write(s.key, current.value, s.modRevision))) {
      out.changed++;
      continue;
    }
    out.resealed++;
    if (s.kid === null) out.migrated++;
  }
  return out;
}
