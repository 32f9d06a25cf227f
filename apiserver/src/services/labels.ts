import { formatLabel, keys, VtlError } from '@vtl/api';
import type { Store } from '@vtl/store';
import type { Snapshot } from '@vtl/domain';

/**
 * Barcodes are unique on their first six characters (the volume serial a backup application
 * keys on), across local cartridges and every generation the catalog knows of.
 */
export const volser = (label: string) => label.slice(0, 6);

/** Volume serials in use locally or in any remote's catalog. */
export async function usedVolsers(store: Store, s: Snapshot): Promise<Set<string>> {
  const used = new Set(s.cartridges.map((c) => volser(c.label)));
  // Catalog keys: <catalog>/<remote>/<system>/<library-serial>/<label>/<generation>
  for (const key of await store.listKeys(keys.catalog.prefix)) {
    const label = key.slice(keys.catalog.prefix.length).split('/')[3];
    if (label) used.add(volser(label));
  }
  return used;
}

/** The next `count` labels for a prefix: after the highest sequence in use, then any gaps. */
export function nextLabels(prefix: string, suffix: string, used: Set<string>, count: number): string[] {
  let highest = 0;
  for (const v of used) {
    if (!v.startsWith(prefix)) continue;
    const seq = v.slice(3);
    if (/^\d{3}$/.test(seq)) highest = Math.max(highest, Number.parseInt(seq, 10));
  }
  const out: string[] = [];
  const order = [...range(highest + 1, 999), ...range(1, highest)];
  for (const n of order) {
    if (out.length === count) break;
    const label = formatLabel(prefix, n, suffix);
    if (!used.has(volser(label))) out.push(label);
  }
  if (out.length < count)
    throw new VtlError(
      'bad_request',
      `Prefix ${prefix} has only ${out.length} unused labels left; give explicit labels or use a library with another prefix.`,
    );
  return out;
}

function* range(from: number, to: number) {
  for (let n = from; n <= to; n++) yield n;
}
