import { beforeAll, describe, expect, it } from 'vitest';
import { CartridgeSpec, Job, POLICY_REQUESTERS, isoNow, keys } from '@vtl/api';
import { EventJournal, type Store } from '@vtl/store';
import { putTestLibrary, putTestNodeStatus, putTestPool, putTestRemote, testJob } from '@vtl/store/testing';
import { generationNow, ieWatcherPass } from './ie-watcher.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

async function seed(store: Store) {
  await putTestPool(store);
  await putTestLibrary(store, { serial: 'S1', num_slots: 9, label_prefix: 'IEW' });
  const carts = [
    ['IEW001L8', 'ie:1'],
    ['IEW002L8', 'slot:2'],
    ['IEW003L8', 'ie:2'],
  ] as const;
  for (const [label] of carts)
    await store.put(
      keys.cartridges.one(label),
      CartridgeSpec.parse({ label, library: 1, home_slot: 1, created_at: isoNow() }),
    );
  await putTestNodeStatus(
    store,
    carts.map(([label, location]) => ({
      label,
      library: 1,
      size_bytes: 1,
      phys_bytes: 1,
      modified: '2026-01-01T00:00:00.000Z',
      location,
      local_state: 'resident',
    })),
  );
  await putTestRemote(store);
  // IEW003L8 came in through an import: the watcher must not send it straight back.
  await store.put(
    keys.jobs.one(100),
    testJob({
      id: 100,
      kind: 'import',
      state: 'succeeded',
      label: 'IEW003L8',
      generation: '20250101T000000Z',
    }),
  );
}

describe('import/export-slot watcher (export.ie_watcher)', () => {
  const t = useTestStore();
  let journal: EventJournal;
  beforeAll(async () => {
    journal = new EventJournal(t.store);
    await seed(t.store);
  });

  it('names generations YYYYMMDDTHHMMSSZ', () => {
    expect(generationNow(new Date('2026-03-04T05:06:07.890Z'))).toBe('20260304T050607Z');
  });

  it('is off by default', async () => {
    await t.store.put(keys.settings, { 'export.default_remote': '1' });
    expect(await ieWatcherPass(t.store, journal)).toEqual([]);
  });

  it('exports a cartridge ejected to an I/E slot once, to the default remote', async () => {
    await t.store.put(keys.settings, {
      'export.default_remote': '1',
      'export.ie_watcher': 'on',
      'system.name': 'site-a',
    });
    const [id, ...more] = await ieWatcherPass(t.store, journal);
    expect(more).toEqual([]);
    const job = (await t.store.get(keys.jobs.one(id!), Job))!.value;
    expect(job).toMatchObject({
      kind: 'export',
      state: 'detected',
      label: 'IEW001L8',
      remote_id: 1,
      system_name: 'site-a',
      node: 'n1',
      requested_by: POLICY_REQUESTERS.ieWatcher,
    });
    expect(await ieWatcherPass(t.store, journal)).toEqual([]);
    // Even once it failed: a retry is the operator's call, not a loop.
    await t.store.put(keys.jobs.one(id!), { ...job, state: 'failed' });
    expect(await ieWatcherPass(t.store, journal)).toEqual([]);
  });
});
