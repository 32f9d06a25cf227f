import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VtlError } from '@vtl/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmuEvent } from '../control/protocol.js';
import { makeTempDir } from '../util/temp-dir.js';
import { driveElement, ieSlot, storageSlot } from './elements.js';
import { INVENTORY_FILE, type LibraryGeometry } from './inventory-file.js';
import { LibraryInventory } from './library-inventory.js';

let tmp: { path: string; cleanup: () => Promise<void> };
let events: EmuEvent[];
let clock: number;
beforeEach(async () => {
  tmp = await makeTempDir();
  events = [];
  clock = Date.parse('2025-01-01T00:00:00Z');
});
afterEach(async () => {
  await tmp.cleanup();
});

const geometry = (over: Partial<LibraryGeometry> = {}): LibraryGeometry => ({
  id: 1,
  numSlots: 4,
  numIe: 2,
  numDrives: 2,
  mediaDir: tmp.path,
  ...over,
});

async function openInv(over: Partial<LibraryGeometry> = {}) {
  const { inventory, notes } = await LibraryInventory.open(geometry(over), {
    events: { emit: (e) => events.push(e) },
    now: () => clock,
    unloadGuardMs: 15_000,
  });
  return Object.assign(inventory, { notes });
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof VtlError ? e.code : String(e)),
  );

describe('library inventory', () => {
  it('places, loads, unloads home and reports drives and slots', async () => {
    const inv = await openInv();
    await inv.place('AAA001L8', 1);
    await inv.place('AAA002L8', 3);
    await inv.place('AAA001L8', 1);
    expect(await refusal(inv.place('AAA001L8', 2))).toBe('bad_request');
    expect(await refusal(inv.place('AAA009L8', 3))).toBe('bad_request');

    const load = await inv.load(0, 'AAA002L8');
    expect(load.detail).toBe('slot 3 -> drive 0');
    expect(inv.drives()[0]).toMatchObject({ loaded: 'AAA002L8', source_slot: 3, activity: 'idle' });
    expect(inv.slots().find((s) => s.kind === 'storage' && s.num === 3)?.label).toBe('');
    expect(events.map((e) => e.kind)).toEqual(['drive_activity', 'manual_load', 'drive_activity']);
    expect(events[0]).toMatchObject({ subject: 'drive:1:0', data: { activity: 'mounting' } });
    expect(events[1]).toMatchObject({ subject: 'AAA002L8', detail: 'slot 3 -> drive 0' });

    clock += 15_000;
    const unload = await inv.unload(0);
    expect(unload.to).toEqual(storageSlot(3));
    expect(events.at(-1)).toMatchObject({ kind: 'manual_unload', detail: 'drive 0 -> slot 3' });
    expect(inv.drives()[0]).toMatchObject({ loaded: '', source_slot: 0 });
  });

  it('refuses loads into a full drive, of unknown labels and of loaded labels', async () => {
    const inv = await openInv();
    await inv.place('AAA001L8', 1);
    await inv.place('AAA002L8', 2);
    await inv.load(0, 'AAA001L8');
    expect(await refusal(inv.load(0, 'AAA002L8'))).toBe('bad_request');
    expect(await refusal(inv.load(1, 'ZZZ999L8'))).toBe('bad_request');
    expect(await refusal(inv.load(1, 'AAA001L8'))).toBe('bad_request');
    expect(await refusal(inv.load(5, 'AAA002L8'))).toBe('bad_request');
    expect(await refusal(inv.remove('AAA001L8'))).toBe('bad_request');
    expect(await inv.remove('AAA002L8')).toBe(true);
    expect(await inv.remove('AAA002L8')).toBe(false);
  });

  it('keeps media in a drive that is busy or was active within the quiet window', async () => {
    const inv = await openInv();
    await inv.place('AAA001L8', 1);
    await inv.load(0, 'AAA001L8');
    expect(await refusal(inv.unload(0))).toBe('bad_request');
    clock += 14_999;
    await expect(inv.unload(0)).rejects.toThrow(/retry in 1 s/);
    clock += 1;
    inv.setActivity(0, 'writing');
    inv.recordIo(0, { written: 3 });
    clock += 60_000;
    await expect(inv.unload(0)).rejects.toThrow(/drive 0 is writing/);
    inv.setActivity(0, 'idle');
    expect(await refusal(inv.unload(0))).toBe('bad_request');
    clock += 15_000;
    await inv.unload(0);
    expect(inv.drives()[0]).toMatchObject({ blocks_written: 3, activity: 'idle', loaded: '' });
    expect(events.filter((e) => e.kind === 'drive_activity').map((e) => e.detail)).toEqual([
      'mounting',
      'idle',
      'writing',
      'idle',
    ]);
  });

  it('lets a host move without the quiet window; an operator unload never returns to the I/E slot', async () => {
    const inv = await openInv();
    await inv.place('AAA001L8', 2);
    await inv.move(storageSlot(2), ieSlot(1), 'host');
    await inv.move(ieSlot(1), driveElement(1), 'host');
    // source_slot names a storage slot only (§2.5): one loaded from an I/E slot has none.
    expect(inv.drives()[1]).toMatchObject({ loaded: 'AAA001L8', source_slot: 0 });
    expect(inv.sourceOf(1)).toEqual(ieSlot(1));
    const moved = await inv.move(driveElement(1), storageSlot(4), 'host');
    expect(moved.detail).toBe('drive 1 -> slot 4');
    expect(events.filter((e) => e.kind === 'cart_moved').map((e) => e.detail)).toEqual([
      'slot 2 -> ie 1',
      'ie 1 -> drive 1',
      'drive 1 -> slot 4',
    ]);
    expect(await refusal(inv.move(storageSlot(1), storageSlot(3), 'host'))).toBe('bad_request');
    await inv.place('AAA002L8', 2);
    expect(await refusal(inv.move(storageSlot(4), storageSlot(2), 'host'))).toBe('bad_request');

    await inv.move(storageSlot(4), ieSlot(2), 'host');
    await inv.load(0, 'AAA001L8');
    expect(inv.drives()[0]).toMatchObject({ source_slot: 0 });
    clock += 15_000;
    // §3.3: unload returns a cartridge to its home or the first empty storage slot.
    const back = await inv.unload(0);
    expect(back).toMatchObject({ to: storageSlot(1), detail: 'drive 0 -> slot 1' });
    expect(inv.slots().find((x) => x.kind === 'ie' && x.num === 2)?.label).toBe('');
  });

  it('unloads to the first empty storage slot when the home slot was filled', async () => {
    const inv = await openInv();
    await inv.place('AAA001L8', 1);
    await inv.load(0, 'AAA001L8');
    // A mint never takes the home slot of a loaded cartridge; the host's changer may.
    await expect(inv.place('AAA002L8', 1)).rejects.toThrow(/home of a loaded cartridge/);
    expect(inv.firstEmptyStorage()).toBe(2);
    await inv.place('AAA002L8', 3);
    await inv.move(storageSlot(3), storageSlot(1), 'host');
    clock += 20_000;
    const r = await inv.unload(0);
    expect(r.to).toEqual(storageSlot(2));
  });

  it('places a batch with one write and answers each refusal on its own', async () => {
    const inv = await openInv();
    await inv.place('AAA001L8', 1);
    await inv.load(0, 'AAA001L8');
    const refused = await inv.placeMany([
      { label: 'AAA002L8', slot: 2 },
      { label: 'AAA003L8', slot: 1 },
      { label: 'AAA004L8', slot: 2 },
      { label: 'AAA005L8', slot: 3 },
    ]);
    expect([...refused.keys()]).toEqual(['AAA003L8', 'AAA004L8']);
    expect(refused.get('AAA003L8')?.message).toMatch(/home of a loaded cartridge/);
    expect(inv.whereIs('AAA002L8')).toEqual(storageSlot(2));
    expect(inv.whereIs('AAA005L8')).toEqual(storageSlot(3));
    // Idempotent: the same item again is no refusal.
    expect((await inv.placeMany([{ label: 'AAA002L8', slot: 2 }])).size).toBe(0);
  });

  it('persists every move atomically and restores it after a restart', async () => {
    const inv = await openInv();
    await inv.place('AAA001L8', 1);
    await inv.place('AAA002L8', 2);
    await inv.load(1, 'AAA002L8');
    const file = JSON.parse(await readFile(join(tmp.path, INVENTORY_FILE), 'utf8'));
    expect(file.drives[1]).toEqual({ label: 'AAA002L8', source: 'slot:2' });

    const again = await openInv();
    expect(again.cartridges()).toEqual([
      { label: 'AAA001L8', at: storageSlot(1) },
      { label: 'AAA002L8', at: driveElement(1) },
    ]);
    expect(again.drives()[1]).toMatchObject({ loaded: 'AAA002L8', source_slot: 2, last_active: '' });
    // Counters and the quiet window are since process start.
    await again.unload(1);
    expect(again.whereIs('AAA002L8')).toEqual(storageSlot(2));
  });

  it('keeps cartridges whose slot vanished when the geometry shrinks', async () => {
    const inv = await openInv();
    await inv.place('AAA001L8', 4);
    await inv.load(1, 'AAA001L8');
    const smaller = await openInv({ numSlots: 2, numDrives: 1 });
    expect(smaller.whereIs('AAA001L8')).toEqual(storageSlot(1));
    expect(smaller.notes).toEqual(['AAA001L8 moved to slot:1']);
  });

  it('lets the drive model refuse a removal and learn about a mount', async () => {
    const inv = await openInv();
    const seen: string[] = [];
    inv.setHooks({
      mediaLoaded: async (d, l) => void seen.push(`loaded ${d} ${l}`),
      mediaUnloading: async (d, l) => {
        seen.push(`unloading ${d} ${l}`);
        if (seen.length < 3) throw new VtlError('bad_request', 'medium removal prevented by the host');
      },
    });
    await inv.place('AAA001L8', 1);
    await inv.move(storageSlot(1), driveElement(0), 'host');
    await expect(inv.move(driveElement(0), storageSlot(1), 'host')).rejects.toThrow(/removal prevented/);
    expect(inv.whereIs('AAA001L8')).toEqual(driveElement(0));
    await inv.move(driveElement(0), storageSlot(1), 'host');
    expect(seen).toEqual(['loaded 0 AAA001L8', 'unloading 0 AAA001L8', 'unloading 0 AAA001L8']);
  });
});
