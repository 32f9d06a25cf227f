import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { Appliance } from './harness/appliance.js';

/** The 15-second unload guard, shortened so the test can watch it lapse. */
const GUARD_MS = 3000;

const declare = (pool: number, over: Record<string, unknown> = {}) => ({
  name: 'lib-a',
  product: '3573-TL',
  drive_product: 'ULT3580-TD8',
  num_drives: 2,
  num_slots: 10,
  num_map: 2,
  label_prefix: 'ABC',
  pool_id: pool,
  ...over,
});

describe('a library from declaration to deletion, through every process', () => {
  let app: Appliance;
  let poolId: number;
  let libId: number;
  let driveSerials: string[];

  beforeAll(async () => {
    app = await Appliance.start({ env: { VTL_UNLOAD_GUARD_MS: String(GUARD_MS) } });
  });
  afterAll(async () => {
    await app?.destroy();
  });

  it('answers health on HTTPS and on the plaintext listener', async () => {
    for (const client of [app.api, app.plain]) {
      const res = await client.get('/healthz');
      expect(res.status).toBe(200);
      expect(res.body.ok).toBe(true);
      expect(res.body.version).toMatch(/^v\d+\.\d+\.\d+$/);
      expect(res.body.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect((await app.plain.get('/api/status')).status).toBe(404);
  });

  it('reports the system with a kept UUID and the plaintext listener', async () => {
    const res = await app.api.get('/api/system');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      plain_listener: `:${app.ports.plain}`,
      draining: false,
      active_jobs: 0,
      apikeys_enabled: false,
    });
    expect(res.body.system_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.system_name).toMatch(/^[a-z0-9][a-z0-9_-]{0,31}$/);
    expect(res.body.uptime_sec).toBeGreaterThanOrEqual(0);
  });

  it('starts with one active directory pool', async () => {
    const res = await app.api.get('/api/pools');
    expect(res.body).toHaveLength(1);
    const [pool] = res.body;
    expect(pool).toMatchObject({ name: 'default', state: 'active', library: null, node: 'node1' });
    expect(pool.figures.fs_total_bytes).toBeGreaterThan(0);
    expect(pool.figures.dedup_ratio).toBe(1);
    poolId = pool.id;
  });

  it('lists the creatable models and the LTO drives', async () => {
    const { body } = await app.api.get('/api/models');
    const byProduct = new Map<string, any>();
    for (const m of body.libraries)
      for (const v of m.variants) byProduct.set(v.product, { ...m, variant: v });
    expect(byProduct.get('3573-TL')).toMatchObject({ creatable: true, max_drives: 4 });
    expect(byProduct.get('03584L32')).toMatchObject({ creatable: true, max_drives: 12 });
    expect([...byProduct.values()].some((m) => !m.variant.creatable)).toBe(true);
    const suffixes = new Set(body.drives.map((d: any) => d.suffix));
    for (let g = 3; g <= 9; g++) expect(suffixes).toContain(`L${g}`);
    expect(body.drives.find((d: any) => d.product === 'ULT3580-TD8')).toMatchObject({
      capacity_mb: 12_000_000,
      density: '0x5E',
    });
  });

  it('refuses every invalid declaration with 400 and writes nothing', async () => {
    const bad: Array<[string, Record<string, unknown>]> = [
      ['unknown product', { product: 'NOPE' }],
      ['non-creatable frame', { product: '3576-MTL' }],
      ['unknown drive', { drive_product: 'ULT3580-TD2' }],
      ['drive of another family', { drive_product: 'Ultrium 8-SCSI' }],
      ['too many drives', { num_drives: 5 }],
      ['no drives', { num_drives: 0 }],
      ['too many slots', { num_slots: 401 }],
      ['too many I/E slots', { num_map: 33 }],
      ['short prefix', { label_prefix: 'AB' }],
      ['lowercase prefix', { label_prefix: 'ab1' }],
      ['unknown pool', { pool_id: 999 }],
      ['unknown field', { colour: 'blue' }],
      ['string drives', { num_drives: '2' }],
    ];
    for (const [why, over] of bad) {
      const res = await app.api.post('/api/libraries', declare(poolId, over));
      expect(res.status, why).toBe(400);
      expect(res.body.error.code, why).toMatch(/bad_request|validation_failed/);
      expect(res.body.error.message.length, why).toBeGreaterThan(10);
    }
    expect((await app.api.get('/api/libraries')).body).toEqual([]);
  });

  it('declares a library: pending_restart, not served', async () => {
    const res = await app.api.post('/api/libraries', declare(poolId));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ state: 'pending_restart' });
    expect(res.body.drive_serials).toHaveLength(2);
    libId = res.body.library;
    driveSerials = res.body.drive_serials;

    const rows = (await app.api.get('/api/libraries')).body;
    expect(rows).toEqual([
      expect.objectContaining({
        id: libId,
        name: 'lib-a',
        product: '3573-TL',
        state: 'pending_restart',
        home_pool: poolId,
      }),
    ]);
    const status = (await app.api.get('/api/status')).body;
    expect(status.libraries[0].library).toMatchObject({ id: libId, live: false, num_slots: 10, num_ie: 2 });
    expect(status.libraries[0].drives).toEqual([]);
    expect(status.libraries[0].slots).toEqual([]);

    const again = await app.api.post('/api/libraries', declare(poolId, { name: 'lib-b' }));
    expect(again.status).toBe(400);
    expect(again.body.error.message).toMatch(/homes library/);

    const mint = await app.api.post('/api/cartridges', { library: libId });
    expect(mint.status).toBe(400);
    const pools = (await app.api.get('/api/pools')).body;
    expect(pools[0].library).toBe(libId);
    expect((await app.api.delete(`/api/pools/${poolId}`)).status).toBe(400);
  });

  it('applies: the emulator restarts and the library comes up live and active', async () => {
    expect((await app.api.post('/api/libraries/apply', { confirm: 'yes' })).status).toBe(400);
    const res = await app.api.post('/api/libraries/apply', { confirm: 'apply' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.steps.length).toBeGreaterThan(2);
    expect(res.body.fc).toEqual({ OK: true, Detail: expect.any(String) });

    const rows = (await app.api.get('/api/libraries')).body;
    expect(rows[0].state).toBe('active');
    const lib = (await app.api.get('/api/status')).body.libraries[0];
    expect(lib.library.live).toBe(true);
    expect(lib.drives).toHaveLength(2);
    expect(lib.drives.map((d: any) => d.serial)).toEqual(driveSerials);
    expect(lib.slots.filter((s: any) => s.kind === 'storage')).toHaveLength(10);
    expect(lib.slots.filter((s: any) => s.kind === 'ie')).toHaveLength(2);

    const events = (await app.api.get('/api/events/recent')).body;
    expect(events.some((e: any) => e.kind === 'maint_step')).toBe(true);
    expect(events.some((e: any) => e.kind === 'maint_done')).toBe(true);
  });

  it('mints labelled cartridges into free storage slots', async () => {
    const next = await app.api.get(`/api/libraries/${libId}/next-label`);
    expect(next.body).toEqual({ label: 'ABC001L8', prefix: 'ABC', suffix: 'L8' });

    const res = await app.api.post('/api/cartridges', { library: 0, count: 3 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      library: libId,
      size_gb: 12000,
      created: [
        { label: 'ABC001L8', slot: 1 },
        { label: 'ABC002L8', slot: 2 },
        { label: 'ABC003L8', slot: 3 },
      ],
    });
    const carts = (await app.api.get('/api/cartridges')).body;
    expect(carts.map((c: any) => [c.label, c.location, c.local_state])).toEqual([
      ['ABC001L8', 'slot:1', 'resident'],
      ['ABC002L8', 'slot:2', 'resident'],
      ['ABC003L8', 'slot:3', 'resident'],
    ]);
    // The VOL1 label is on the image: the host sees written bytes.
    expect(carts[0].size_bytes).toBeGreaterThan(0);

    for (const [why, body] of [
      ['label exists', { library: libId, label: 'ABC001L8' }],
      ['wrong suffix', { library: libId, label: 'ABC009L7' }],
      ['label with count', { library: libId, label: 'ABC009L8', count: 2 }],
      ['bad label', { library: libId, label: 'AB!' }],
      ['unknown library', { library: 77 }],
    ] as const) {
      const refused = await app.api.post('/api/cartridges', body);
      expect(refused.status, why).toBe(400);
    }
    expect((await app.api.get('/api/cartridges')).body).toHaveLength(3);
    expect((await app.api.get('/api/cartridges/NOPE01L8')).status).toBe(404);
  });

  it('caps a mint batch at the free storage slots', async () => {
    const res = await app.api.post('/api/cartridges', { library: libId, count: 50 });
    expect(res.status).toBe(200);
    expect(res.body.created).toHaveLength(7);
    const more = await app.api.post('/api/cartridges', { library: libId });
    expect(more.status).toBe(400);
    for (const { label } of res.body.created)
      expect((await app.api.delete(`/api/cartridges/${label}`, { confirm: label })).status).toBe(200);
  });

  it('loads and unloads through the emulator, with every refusal', async () => {
    const load = await app.api.post(`/api/libraries/${libId}/drives/0/load`, { label: 'ABC001L8' });
    expect(load.status, JSON.stringify(load.body)).toBe(200);
    expect(load.body.ok).toBe(true);
    // The drive was just active (mounting): the guard refuses at once (the next requests may
    // take longer than the guard on a busy machine, so this one comes first).
    const early = await app.api.post(`/api/libraries/${libId}/drives/0/unload`);
    expect(early.status).toBe(400);
    expect(early.body.error.message).toMatch(/active|seconds/i);
    const status = (await app.api.get('/api/status')).body;
    expect(status.libraries[0].drives[0]).toMatchObject({ loaded: 'ABC001L8', source_slot: 1 });
    expect((await app.api.get('/api/cartridges/ABC001L8')).body.location).toBe('drive:0');

    expect((await app.api.post(`/api/libraries/${libId}/drives/0/load`, { label: 'ABC002L8' })).status).toBe(
      400,
    );
    expect((await app.api.post(`/api/libraries/${libId}/drives/1/load`, { label: 'ZZZ001L8' })).status).toBe(
      400,
    );
    expect((await app.api.post(`/api/libraries/${libId}/drives/9/load`, { label: 'ABC002L8' })).status).toBe(
      400,
    );
    expect((await app.api.post(`/api/libraries/${libId}/drives/1/unload`)).status).toBe(400);
    expect((await app.api.post('/api/libraries/apply', { confirm: 'apply' })).status).toBe(400);
    expect((await app.api.delete('/api/cartridges/ABC001L8', { confirm: 'ABC001L8' })).status).toBe(400);
    // §4.2 rule 7: a loaded drive with no job refuses apply, not a data-plane restart; the
    // emulator keeps its inventory, so the cartridge is still in the drive afterwards.
    const restart = await app.api.post('/api/system/dataplane-restart', { confirm: 'restart' });
    expect(restart.status, JSON.stringify(restart.body)).toBe(200);
    expect((await app.api.get('/api/status')).body.libraries[0].drives[0]).toMatchObject({
      loaded: 'ABC001L8',
      source_slot: 1,
    });

    // The guard let go meanwhile (or soon): the unload goes through.
    let unload = early;
    await waitFor(
      async () => {
        unload = await app.api.post(`/api/libraries/${libId}/drives/0/unload`);
        return unload.status === 200;
      },
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    expect(unload.body).toMatchObject({ ok: true, slot: 1 });
    expect((await app.api.get('/api/cartridges/ABC001L8')).body.location).toBe('slot:1');
  });

  it('deletes a cartridge only with its label as confirmation', async () => {
    expect((await app.api.delete('/api/cartridges/ABC003L8', { confirm: 'ABC002L8' })).status).toBe(400);
    expect((await app.api.delete('/api/cartridges/NOPE01L8', { confirm: 'NOPE01L8' })).status).toBe(404);
    const res = await app.api.delete('/api/cartridges/ABC003L8', { confirm: 'ABC003L8' });
    expect(res.body).toEqual({ ok: true, label: 'ABC003L8' });
    expect((await app.api.get('/api/cartridges/ABC003L8')).status).toBe(404);
    const events = (await app.api.get('/api/events/search?kind=cart_deleted')).body;
    expect(events.map((e: any) => e.subject)).toContain('ABC003L8');
  });

  it('deletes the live library: cartridges erased, pool freed, reboot requested', async () => {
    const lib = (await app.api.get('/api/libraries')).body[0];
    expect(
      (await app.api.delete(`/api/libraries/${libId}`, { confirm: 'wrong', acknowledge: 'I understand' }))
        .status,
    ).toBe(400);
    expect(
      (await app.api.delete(`/api/libraries/${libId}`, { confirm: lib.name, acknowledge: 'yes' })).status,
    ).toBe(400);
    expect((await app.api.get('/api/libraries')).body).toHaveLength(1);

    const res = await app.api.delete(`/api/libraries/${libId}`, {
      confirm: lib.serial,
      acknowledge: 'I understand',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      library: libId,
      name: 'lib-a',
      cartridges_deleted: 2,
      skipped: [],
      rebooting: true,
    });
    expect((await app.api.get('/api/libraries')).body).toEqual([]);
    expect((await app.api.get('/api/cartridges')).body).toEqual([]);
    expect((await app.api.get('/api/pools')).body[0].library).toBeNull();
    await expect(fs.access(lib.media_dir)).rejects.toThrow();
    await waitFor(
      async () => (await fs.readFile(app.rebootLog, 'utf8').catch(() => '')).includes('deleted'),
      {
        timeoutMs: 5_000,
      },
    );
    expect(
      (await app.api.delete(`/api/libraries/${libId}`, { confirm: lib.serial, acknowledge: 'I understand' }))
        .status,
    ).toBe(404);
  });
});
