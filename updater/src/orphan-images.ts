import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { CartridgeSpec, LibrarySpec, keys, type OrphanImage } from '@vtl/api';
import type { Store } from '@vtl/store';

/**
 * Cartridge images a rollback leaves without a record. A rollback restores the store, never the
 * pools: a cartridge minted after the update keeps its image (and its slot in the emulator) while
 * its record is gone. The appliance keeps such data and reports it (docs/updates.md): these
 * helpers name the cartridges before the rollback and find the images after it.
 */

/** Labels of the cartridge records in a store snapshot (the keyspace-snapshot JSON-lines file). */
export async function snapshotCartridgeLabels(file: string): Promise<Set<string>> {
  const labels = new Set<string>();
  const lines = readline.createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let header = true;
  for await (const line of lines) {
    if (header || !line) {
      header = false;
      continue;
    }
    const key = Buffer.from((JSON.parse(line) as { k: string }).k, 'base64').toString();
    if (key.startsWith(keys.cartridges.prefix)) labels.add(key.slice(keys.cartridges.prefix.length));
  }
  return labels;
}

/** Cartridges recorded now that the snapshot does not hold: a rollback to it drops their records. */
export async function cartridgesSince(store: Store, snapshotFile: string): Promise<string[]> {
  const before = await snapshotCartridgeLabels(snapshotFile);
  const now = (await store.list(keys.cartridges.prefix, CartridgeSpec)).items.map((i) => i.value.label);
  return now.filter((label) => !before.has(label)).sort();
}

/**
 * Image directories in the media directory of every recorded library that no cartridge record
 * names (an image is a directory; hidden entries are the emulator's staging and bookkeeping).
 */
export async function findOrphanImages(store: Store): Promise<OrphanImage[]> {
  const [libraries, carts] = await Promise.all([
    store.list(keys.libraries.prefix, LibrarySpec),
    store.list(keys.cartridges.prefix, CartridgeSpec),
  ]);
  const known = new Set(carts.items.map((i) => i.value.label));
  const found: OrphanImage[] = [];
  for (const { value: lib } of libraries.items) {
    const entries = await fs.readdir(lib.media_dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries)
      if (e.isDirectory() && !e.name.startsWith('.') && !known.has(e.name))
        found.push({ label: e.name, library: lib.id, path: path.join(lib.media_dir, e.name) });
  }
  return found.sort((a, b) => a.label.localeCompare(b.label));
}
