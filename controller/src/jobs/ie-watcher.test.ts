import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CartridgeSpec,
  Job,
  LibrarySpec,
  NodeStatus,
  POLICY_REQUESTERS,
  PoolSpec,
  isoNow,
  keys,
  type RemoteRecord,
} from '@vtl/api';
import { EventJournal, startTestStores, type Store, type TestStores } from '@vtl/store';
import { generationNow, ieWatcherPass } from './ie-watcher.js';

async function seed(store: Store) {
  await store.put(
    keys.pools.one(1),
    PoolSpec.parse({ id: 1, name: 'p', node: 'n1', path: '/p', created_at: isoNow() }),
  );
  await store.put(
    keys.libraries.one(1),
    LibrarySpec.parse({
      id: 1,
      name: 'l',
      vendor: 'IBM',
      product: '3573-TL',
      variant: '',
      serial: 'S1',
      drive_model: 'ULT3580-TD8',
      drive_serials: [],
      num_drives: 1,
      num_slots: 9,
      num_ie: 2,
      label_prefix: 'IEW',
      media_dir: '/p/l',
      home_pool: 1,
      created_at: isoNow(),
    }),
  );
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
  await store.put(
    keys.nodeStatus.one('n1'),
    NodeStatus.parse({
      node: 'n1',
      updated_at: isoNow(),
      dataplane: {
        state: 'running',
        generation: 1,
        pid: 1,
        detail: '',
        started_at: isoNow(),
        iscsi_portal: '',
      },
      libraries: [],
      cartridges: carts.map(([label, location]) => ({
        label,
        library: 1,
        size_bytes: 1,
        phys_bytes: 1,
        modified: '2026-01-01T00:00:00.000Z',
        location,
        local_state: 'resident',
      })),
    }),
  );
  const remote: RemoteRecord = {
    id: 1,
    name: 'r',
    endpoint: 'e',
    region: '',
    bucket: 'b',
    prefix: '',
    access_key: 'a',
    use_ssl: false,
    path_style: true,
    created_at: isoNow(),
    last_test_at: '',
    last_test_ok: false,
    last_test_detail: '',
  };
  await store.put(keys.remotes.one(1), remote);
  // IEW003L8 came in through an import: the watcher must not send it straight back.
  await store.put(
    keys.jobs.one(100),
    Job.parse({
      id: 100,
      kind: 'import',
      state: 'succeeded',
      label: 'IEW003L8',
      library: 1,
      remote_id: 1,
      generation: '20250101T000000Z',
      bytes_done: 0,
      chunks_done: 0,
      detail: '',
      created_at: isoNow(),
      updated_at: isoNow(),
    }),
  );
}

describe('import/export-slot watcher (export.ie_watcher)', () => {
  let t: TestStores;
  let store: Store;
  let journal: EventJournal;
  beforeAll(async () => {
    t = await startTestStores();
    store = t.stores[0]!;
    journal = new EventJournal(store);
    await seed(store);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('names generations YYYYMMDDTHHMMSSZ', () => {
    expect(generationNow(new Date('2026-03-04T05:06:07.890Z'))).toBe('20260304T050607Z');
  });

  it('is off by default', async () => {
    await store.put(keys.settings, { 'export.default_remote': '1' });
    expect(await ieWatcherPass(store, journal)).toEqual([]);
  });

  it('exports a cartridge ejected to an I/E slot once, to the default remote', async () => {
    await store.put(keys.settings, {
      'export.default_remote': '1',
      'export.ie_watcher': 'on',
      'system.name': 'site-a',
    });
    const [id, ...more] = await ieWatcherPass(store, journal);
    expect(more).toEqual([]);
    const job = (await store.get(keys.jobs.one(id!), Job))!.value;
    expect(job).toMatchObject({
      kind: 'export',
      state: 'detected',
      label: 'IEW001L8',
      remote_id: 1,
      system_name: 'site-a',
      node: 'n1',
      requested_by: POLICY_REQUESTERS.ieWatcher,
    });
    expect(await ieWatcherPass(store, journal)).toEqual([]);
    // Even once it failed: a retry is the operator's call, not a loop.
    await store.put(keys.jobs.one(id!), { ...job, state: 'failed' });
    expect(await ieWatcherPass(store, journal)).toEqual([]);
  });
});
