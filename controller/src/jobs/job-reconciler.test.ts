import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { CartridgeSpec, Job, LibrarySpec, PoolSpec, RemoteRecord, isoNow, keys } from '@vtl/api';
import { EventJournal, waitFor } from '@vtl/store';
import { startJobReconciler } from './job-reconciler.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const job = (id: number, kind: Job['kind'], state: Job['state'], extra: Partial<Job> = {}) =>
  Job.parse({
    id,
    kind,
    state,
    label: 'ABC001L8',
    library: 1,
    remote_id: 1,
    generation: '20260101T000000Z',
    bytes_done: 0,
    chunks_done: 0,
    detail: '',
    created_at: isoNow(),
    updated_at: isoNow(),
    ...extra,
  });

describe('job admission by the controller', () => {
  const t = useTestStore();
  let stop: () => Promise<void>;
  beforeAll(async () => {
    await t.store.put(
      keys.pools.one(1),
      PoolSpec.parse({ id: 1, name: 'p', node: 'n1', path: '/p', created_at: isoNow() }),
    );
    await t.store.put(
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
        num_slots: 5,
        num_ie: 1,
        label_prefix: 'ABC',
        media_dir: '/p/l',
        home_pool: 1,
        created_at: isoNow(),
      }),
    );
    await t.store.put(
      keys.cartridges.one('ABC001L8'),
      CartridgeSpec.parse({ label: 'ABC001L8', library: 1, home_slot: 1, created_at: isoNow() }),
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
    await t.store.put(keys.remotes.one(1), remote);
    const r = await startJobReconciler({
      store: t.store,
      journal: new EventJournal(t.store),
      logger: pino({ level: 'silent' }),
    });
    stop = r.stop;
  });
  afterAll(async () => {
    await stop?.();
  });

  const state = async (id: number) => (await t.store.get(keys.jobs.one(id), Job))!.value;

  it.each([
    [1, 'export', 'detected', 'quiescing'],
    [2, 'evict', 'queued', 'verifying'],
    [3, 'import', 'queued', 'downloading'],
  ] as const)('job %i (%s) moves from %s to %s on the node of its pool', async (id, kind, from, to) => {
    await t.store.put(keys.jobs.one(id), job(id, kind, from));
    await waitFor(async () => (await state(id)).state === to, { timeoutMs: 10_000 });
    expect(await state(id)).toMatchObject({ node: 'n1', state: to });
    expect((await state(id)).started_at).not.toBe('');
  });

  it.each([
    [4, { remote_id: 9 }, 'remote 9 does not exist'],
    [9, { library: 7 }, 'library 7 does not exist'],
    [10, { label: 'GONE01L8' }, 'cartridge GONE01L8 does not exist'],
  ] as const)(
    'fails job %i, retried after what it needs was deleted (%j), saying so',
    async (id, extra, why) => {
      // Left in detected it would count as active and block apply, restart and library delete.
      await t.store.put(keys.jobs.one(id), job(id, 'export', 'detected', extra));
      await waitFor(async () => (await state(id)).state === 'failed', { timeoutMs: 10_000 });
      expect((await state(id)).error).toContain(why);
    },
  );

  it('leaves terminal and interrupted jobs alone', async () => {
    await t.store.put(keys.jobs.one(5), job(5, 'export', 'interrupted'));
    await t.store.put(keys.jobs.one(6), job(6, 'export', 'detected'));
    await waitFor(async () => (await state(6)).state === 'quiescing', { timeoutMs: 10_000 });
    expect((await state(5)).state).toBe('interrupted');
  });

  it('fails an import into a library that is not live, saying to apply and retry', async () => {
    await t.store.put(keys.jobs.one(7), job(7, 'import', 'queued', { label: 'ABC009L8', target_library: 1 }));
    await waitFor(async () => (await state(7)).state === 'failed', { timeoutMs: 10_000 });
    expect((await state(7)).error).toMatch(/library 1 is not live.*POST \/api\/libraries\/apply.*retry/);
    await t.store.put(keys.libraryStatus.one(1), { id: 1, state: 'active' });
    await t.store.put(keys.jobs.one(8), job(8, 'import', 'queued', { label: 'ABC009L8', target_library: 1 }));
    await waitFor(async () => (await state(8)).state === 'downloading', { timeoutMs: 10_000 });
  });
});
