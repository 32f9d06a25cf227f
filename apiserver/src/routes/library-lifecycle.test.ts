import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibrarySpec, LibraryStatus, PoolSpec, isoNow, keys } from '@vtl/api';
import { startTestApp, type TestApp } from '../test/test-app.js';

/**
 * The lifecycle the controller writes (phase, observedGeneration, conditions) on the rows of
 * GET /api/libraries and the libraries of GET /api/status, as on GET /api/libraries/{lib}/status.
 */
describe('library lifecycle on the list views (beyond the spec)', () => {
  let t: TestApp;
  const spec = LibrarySpec.parse({
    id: 1,
    name: 'lc',
    vendor: 'IBM',
    product: '3573-TL',
    variant: '',
    serial: 'LIFE0001',
    drive_model: 'ULT3580-TD8',
    drive_serials: [],
    num_drives: 1,
    num_slots: 5,
    num_ie: 1,
    label_prefix: 'LCY',
    media_dir: '/p1/LIFE0001',
    home_pool: 1,
    created_at: isoNow(),
  });
  const notReady = {
    type: 'Ready',
    status: 'False',
    reason: 'NodeNotReporting',
    message: 'Node n1 has not reported its status within its lease.',
    lastTransitionTime: '2026-01-01T00:00:00.000Z',
  } as const;

  beforeAll(async () => {
    t = await startTestApp();
    await t.store.put(
      keys.pools.one(1),
      PoolSpec.parse({ id: 1, name: 'p', node: 'n1', path: '/p1', created_at: isoNow() }),
    );
    await t.store.put(keys.libraries.one(1), spec);
  });
  afterAll(() => t?.close());

  const views = async () => ({
    row: (await t.call('GET', '/api/libraries')).json()[0],
    entry: (await t.call('GET', '/api/status')).json().libraries[0],
    one: (await t.call('GET', '/api/libraries/1/status')).json(),
  });

  it('shows a library the controller has not looked at as declared, with no conditions', async () => {
    const { row, entry, one } = await views();
    const declared = { phase: 'declared', observedGeneration: null, conditions: [] };
    expect(row).toMatchObject({ id: 1, serial: 'LIFE0001', state: 'pending_restart', ...declared });
    expect(entry).toMatchObject({ library: { id: 1, live: false }, ...declared });
    expect(one).toMatchObject(declared);
  });

  it('shows the status record on every view, and its change at once', async () => {
    const status = LibraryStatus.parse({
      id: 1,
      state: 'active',
      phase: 'degraded',
      observedGeneration: 42,
      conditions: [notReady],
    });
    await t.store.put(keys.libraryStatus.one(1), status);
    const want = { phase: 'degraded', observedGeneration: 42, conditions: [notReady] };
    const { row, entry, one } = await views();
    expect(row).toMatchObject({ state: 'active', ...want });
    expect(entry).toMatchObject(want);
    expect(one).toMatchObject(want);
    // A new status is shown by the next read: the /api/status fragment is not kept past it.
    await t.store.put(keys.libraryStatus.one(1), { ...status, phase: 'active', conditions: [] });
    const after = await views();
    expect([after.row.phase, after.entry.phase, after.one.phase]).toEqual(['active', 'active', 'active']);
  });
});
