import { describe, expect, it } from 'vitest';
import { CartridgeSpec, isoNow, keys } from '@vtl/api';
import {
  markCartridgeDeleting,
  mintCartridges,
  recordImportedCartridge,
  removeDeletedCartridge,
  setLastExportGen,
} from './cartridges.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const cart = (label: string, home_slot = 1): CartridgeSpec => ({
  label,
  library: 1,
  home_slot,
  created_at: isoNow(),
  deleting: false,
  last_export_gen: '',
});

describe('cartridge records (mint, delete, import, export)', () => {
  const t = useTestStore();

  const read = (label: string) => t.store.get(keys.cartridges.one(label), CartridgeSpec);

  it('a mint stops at a taken label and names what it created before it', async () => {
    await mintCartridges(t.store, [cart('TKN001L8')]);
    const batch = Array.from({ length: 101 }, (_, i) => cart(`MNT${String(i).padStart(3, '0')}L8`, i + 1));
    batch.push(cart('TKN001L8', 200));
    await expect(mintCartridges(t.store, batch)).rejects.toMatchObject({
      details: { created: batch.slice(0, 100).map((c) => ({ label: c.label, slot: c.home_slot })) },
    });
    expect((await read('TKN001L8'))?.value.home_slot).toBe(1);
    expect(await read('MNT100L8')).toBeUndefined();
  });

  it('of racing deletes one marks the cartridge; the rest are refused', async () => {
    await mintCartridges(t.store, [cart('DEL001L8')]);
    const results = await Promise.allSettled([1, 2, 3].map(() => markCartridgeDeleting(t.store, 'DEL001L8')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const found = (await read('DEL001L8'))!;
    expect(found.value.deleting).toBe(true);
    // A removal of a record read before a change keeps it.
    await setLastExportGen(t.store, 'DEL001L8', '0002');
    expect(await removeDeletedCartridge(t.store, 'DEL001L8', found.modRevision)).toBe(false);
    const now = (await read('DEL001L8'))!;
    expect(await removeDeletedCartridge(t.store, 'DEL001L8', now.modRevision)).toBe(true);
    expect(await read('DEL001L8')).toBeUndefined();
  });

  it('an import records a free label only; last_export_gen only grows', async () => {
    expect(await recordImportedCartridge(t.store, { ...cart('IMP001L8'), last_export_gen: '0005' })).toBe(
      true,
    );
    expect(await recordImportedCartridge(t.store, { ...cart('IMP001L8', 9), last_export_gen: '0009' })).toBe(
      false,
    );
    await setLastExportGen(t.store, 'IMP001L8', '0003');
    expect((await read('IMP001L8'))?.value).toMatchObject({ home_slot: 1, last_export_gen: '0005' });
    await setLastExportGen(t.store, 'IMP001L8', '0007');
    expect((await read('IMP001L8'))?.value.last_export_gen).toBe('0007');
  });
});
