import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appliance } from './harness/appliance.js';

describe('pools: a directory on a named node', () => {
  let app: Appliance;

  beforeAll(async () => {
    app = await Appliance.start();
  });
  afterAll(async () => {
    await app?.destroy();
  });

  it('creates a pool that its nodeagent makes and reports active', async () => {
    const dir = path.join(app.stateDir, 'pools', 'second');
    const res = await app.api.post('/api/pools', { name: 'second', path: dir });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      name: 'second',
      node: 'node1',
      path: dir,
      state: 'active',
      library: null,
    });
    expect(res.body.figures.mountpoint).toBe(dir);
    expect((await fs.stat(dir)).isDirectory()).toBe(true);
    const events = (await app.api.get('/api/events/search?kind=pool_created')).body;
    expect(events.map((e: any) => e.subject)).toContain('second');
    const figures = (await app.api.get('/api/status')).body.pools.map((p: any) => p.name);
    expect(figures).toEqual(expect.arrayContaining(['default', 'second']));
  });

  it('refuses a duplicate name, an overlapping path, a relative path and an unknown node', async () => {
    const before = (await app.api.get('/api/pools')).body;
    const cases: Array<[string, unknown, number]> = [
      ['duplicate name', { name: 'second', path: '/tmp/elsewhere-x' }, 409],
      [
        'inside another pool',
        { name: 'third', path: path.join(app.stateDir, 'pools', 'second', 'sub') },
        400,
      ],
      ['relative path', { name: 'third', path: 'relative/dir' }, 400],
      ['bad name', { name: 'Third!', path: '/tmp/elsewhere-y' }, 400],
      ['unknown field', { name: 'third', path: '/tmp/elsewhere-z', size: 3 }, 400],
    ];
    for (const [why, body, status] of cases) {
      const res = await app.api.post('/api/pools', body);
      expect(res.status, why).toBe(status);
      expect(res.body.error.message, why).toBeTruthy();
    }
    expect((await app.api.get('/api/pools')).body.map((p: any) => p.id)).toEqual(
      before.map((p: any) => p.id),
    );
  });

  it('refuses to remove a pool that homes a library, removes a free one', async () => {
    const pools = (await app.api.get('/api/pools')).body;
    const second = pools.find((p: any) => p.name === 'second');
    const lib = await app.api.post('/api/libraries', {
      name: 'on-second',
      product: '3573-TL',
      drive_product: 'ULT3580-HH6',
      num_drives: 1,
      label_prefix: 'SEC',
      pool_id: second.id,
    });
    expect(lib.status).toBe(201);
    expect((await app.api.delete(`/api/pools/${second.id}`)).status).toBe(400);
    expect((await app.api.delete('/api/pools/999')).status).toBe(404);

    const legacy = (await app.api.get('/api/library')).body;
    expect(legacy.libraries[0].library).toMatchObject({ id: lib.body.library, live: false });
    expect(legacy.libraries[0].library.name).toBeUndefined();

    expect(
      (
        await app.api.delete(`/api/libraries/${lib.body.library}`, {
          confirm: 'on-second',
          acknowledge: 'I understand',
        })
      ).status,
    ).toBe(200);
    const removed = await app.api.delete(`/api/pools/${second.id}`);
    expect(removed.status).toBe(200);
    expect((await app.api.get('/api/pools')).body.map((p: any) => p.name)).toEqual(['default']);
    const events = (await app.api.get('/api/events/search?kind=pool_removed')).body;
    expect(events.map((e: any) => e.subject)).toContain('second');
  });
});
