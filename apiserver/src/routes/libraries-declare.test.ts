import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolSpec, isoNow, keys } from '@vtl/api';
import { startTestApp, type TestApp } from '../test/test-app.js';

describe('POST /api/libraries: a refused declare changes nothing', () => {
  let t: TestApp;
  const declare = (body: object) =>
    t.app.inject({ method: 'POST', url: '/api/libraries', headers: t.admin, payload: body });
  const valid = (pool_id: number) => ({
    product: '3573-TL',
    drive_product: 'ULT3580-TD8',
    num_drives: 1,
    label_prefix: 'DCL',
    pool_id,
  });

  beforeAll(async () => {
    t = await startTestApp();
    for (const id of [1, 2]) {
      await t.store.put(
        keys.pools.one(id),
        PoolSpec.parse({ id, name: `p${id}`, node: 'n1', path: `/p${id}`, created_at: isoNow() }),
      );
      await t.store.put(keys.poolStatus.one(id), { id, node: 'n1', state: 'active', detail: '' });
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refused declares leave the id counter: the next accepted one gets the next id', async () => {
    const first = await declare(valid(1));
    expect(first.statusCode, first.body).toBe(201);
    for (let i = 0; i < 3; i++) {
      expect((await declare({ ...valid(2), product: 'NOPE' })).statusCode).toBe(400);
      // Pool 1 homes the first library already.
      expect((await declare(valid(1))).statusCode).toBe(400);
    }
    const next = await declare(valid(2));
    expect(next.statusCode, next.body).toBe(201);
    expect(next.json().library).toBe(first.json().library + 1);
  });
});
