import { waitFor } from '@vtl/reconcile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appliance } from './harness/appliance.js';

describe('stopping and starting the appliance keeps every record and cartridge', () => {
  let app: Appliance;

  beforeAll(async () => {
    app = await Appliance.start();
  });
  afterAll(async () => {
    await app?.destroy();
  });

  it('comes back with the same identity, libraries, cartridges and slots', async () => {
    const pool = (await app.api.get('/api/pools')).body[0];
    const declared = await app.api.post('/api/libraries', {
      name: 'keep',
      product: '03584L32',
      drive_product: 'ULT3580-TD9',
      num_drives: 3,
      num_slots: 0,
      num_map: 0,
      label_prefix: 'KEP',
      pool_id: pool.id,
    });
    expect(declared.status).toBe(201);
    await app.apply();
    const minted = await app.api.post('/api/cartridges', { library: 0, count: 2 });
    expect(minted.status).toBe(200);
    expect(
      (await app.api.post(`/api/libraries/${declared.body.library}/drives/2/load`, { label: 'KEP002L9' }))
        .status,
    ).toBe(200);

    const before = {
      system: (await app.api.get('/api/system')).body,
      libraries: (await app.api.get('/api/libraries')).body,
      cartridges: (await app.api.get('/api/cartridges')).body,
      status: (await app.api.get('/api/status')).body,
    };
    expect(before.status.libraries[0].slots.filter((s: any) => s.kind === 'storage')).toHaveLength(100);
    expect(before.status.libraries[0].slots.filter((s: any) => s.kind === 'ie')).toHaveLength(4);

    await app.stop();
    await app.boot();

    const system = (await app.api.get('/api/system')).body;
    expect(system.system_uuid).toBe(before.system.system_uuid);
    expect(system.system_name).toBe(before.system.system_name);
    // Everything a library row says comes back, once it is Ready again: its conditions went
    // False while the appliance was down, so only their transition times moved.
    const ready = (row: any) => row.conditions.some((c: any) => c.type === 'Ready' && c.status === 'True');
    let libraries: any[] = [];
    await waitFor(async () => (libraries = (await app.api.get('/api/libraries')).body).every(ready), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    const withoutTransitionTimes = (rows: any[]) =>
      rows.map((row) => ({
        ...row,
        conditions: row.conditions.map(({ lastTransitionTime: _, ...condition }: any) => condition),
      }));
    expect(withoutTransitionTimes(libraries)).toEqual(withoutTransitionTimes(before.libraries));
    const status = (await app.api.get('/api/status')).body;
    expect(status.libraries[0].library.live).toBe(true);
    expect(status.libraries[0].slots).toEqual(before.status.libraries[0].slots);
    expect(status.libraries[0].drives[2].loaded).toBe('KEP002L9');
    const cartridges = (await app.api.get('/api/cartridges')).body;
    expect(cartridges.map((c: any) => [c.label, c.location, c.size_bytes])).toEqual(
      before.cartridges.map((c: any) => [c.label, c.location, c.size_bytes]),
    );
  });
});
