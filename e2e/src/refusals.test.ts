import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job, keys } from '@vtl/api';
import { Store } from '@vtl/store';
import { testJob } from '@vtl/store/testing';
import { Appliance } from './harness/appliance.js';

/** A library row's lifecycle fields: the controller's library reconciler writes them at any time. */
const RECONCILER_OWNED = new Set(['phase', 'observedGeneration', 'conditions']);

/** What a refused apply or delete could have changed: the library's spec and its applied state. */
function refusable(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([k]) => !RECONCILER_OWNED.has(k)));
}

/**
 * Refusals that depend on jobs and on a draining control plane. The job rows and the drain
 * flag are written straight into etcd, as the job machinery and a graceful restart would.
 */
describe('maintenance is refused while jobs run or the control plane drains', () => {
  let app: Appliance;
  let store: Store;
  let libId: number;

  beforeAll(async () => {
    app = await Appliance.start();
    store = await app.connectStore();
    const pool = (await app.api.get('/api/pools')).body[0];
    const res = await app.api.post('/api/libraries', {
      product: '3573-TL',
      drive_product: 'ULT3580-HH7',
      num_drives: 1,
      label_prefix: 'JOB',
      pool_id: pool.id,
    });
    libId = res.body.library;
    expect(res.body.state).toBe('pending_restart');
  });
  afterAll(async () => {
    await store?.close();
    await app?.destroy();
  });

  it('names the library after its serial when no name is given', async () => {
    const row = (await app.api.get('/api/libraries')).body[0];
    expect(row.name).toBe(row.serial);
  });

  it('refuses apply, data-plane restart and library delete with a queued job', async () => {
    // A job the controller leaves alone: it admits exports from `detected` only, and a queued
    // import or evict naming no remote would be failed at once ("remote 1 does not exist"),
    // before the refusals it is here for.
    const job = testJob({ kind: 'export', state: 'queued', label: 'JOB001L7', library: libId });
    await store.put(keys.jobs.one(1), job);
    const lib = (await app.api.get('/api/libraries')).body[0];

    const apply = await app.api.post('/api/libraries/apply', { confirm: 'apply' });
    expect(apply.status).toBe(400);
    expect(apply.body.error.message).toMatch(/job/);
    expect((await app.api.post('/api/system/dataplane-restart', { confirm: 'restart' })).status).toBe(400);
    const del = await app.api.delete(`/api/libraries/${libId}`, {
      confirm: lib.name,
      acknowledge: 'I understand',
    });
    expect(del.status).toBe(400);
    expect((await app.api.get('/api/system')).body.active_jobs).toBe(1);

    // Nothing the refusals own changed: still declared, still pending. Phase and conditions are
    // the reconciler's, which may write them meanwhile (a loaded machine made this flaky).
    const after = (await app.api.get('/api/libraries')).body as Record<string, unknown>[];
    expect(after.map(refusable)).toEqual([refusable(lib)]);
    expect(after[0]!.state).toBe('pending_restart');
    await store.put(keys.jobs.one(1), { ...job, state: 'succeeded' });
  });

  it('answers 409 to disruptive calls while a graceful restart drains', async () => {
    // A drain without an active job ends at once: the controller restarts the control plane.
    const job = (await store.get(keys.jobs.one(1), Job))!.value;
    await store.put(keys.jobs.one(1), { ...job, state: 'queued' });
    await store.put(keys.drain, { draining: true });
    const lib = (await app.api.get('/api/libraries')).body[0];
    expect((await app.api.post('/api/system/dataplane-restart', { confirm: 'restart' })).status).toBe(409);
    const del = await app.api.delete(`/api/libraries/${libId}`, {
      confirm: lib.name,
      acknowledge: 'I understand',
    });
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe('draining');
    expect((await app.api.get('/api/system')).body.draining).toBe(true);
    await store.put(keys.drain, { draining: false });
    await store.put(keys.jobs.one(1), { ...job, state: 'succeeded' });
  });

  it('deletes a library that was never served without a reboot', async () => {
    const lib = (await app.api.get('/api/libraries')).body[0];
    const res = await app.api.delete(`/api/libraries/${libId}`, {
      confirm: lib.name,
      acknowledge: 'I understand',
    });
    expect(res.body).toMatchObject({ ok: true, cartridges_deleted: 0, rebooting: false });
    const events = (await app.api.get('/api/events/search?kind=maint_done')).body;
    expect(events[0].detail).toMatch(/delete_library/);
  });
});
