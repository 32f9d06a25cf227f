import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Job, LibrarySpec, PoolSpec, isoNow, keys } from '@vtl/api';
import { startTestApp, type TestApp } from '../test/test-app.js';

describe('POST /api/libraries/recover refusals (§4.6 rule 5, §7)', () => {
  let t: TestApp;
  let remote: number;
  const recover = (body: object) =>
    t.app.inject({ method: 'POST', url: '/api/libraries/recover', headers: t.admin, payload: body });
  const valid = () => ({ remote_id: remote, system_name: 'site-a', library_serial: 'NEWSER01', pool_id: 2 });

  beforeAll(async () => {
    t = await startTestApp();
    const s = t.store;
    await s.put(
      keys.pools.one(1),
      PoolSpec.parse({ id: 1, name: 'used', node: 'n1', path: '/p1', created_at: isoNow() }),
    );
    await s.put(
      keys.pools.one(2),
      PoolSpec.parse({ id: 2, name: 'free', node: 'n1', path: '/p2', created_at: isoNow() }),
    );
    await s.put(keys.poolStatus.one(1), { id: 1, node: 'n1', state: 'active', detail: '' });
    await s.put(
      keys.libraries.one(1),
      LibrarySpec.parse({
        id: 1,
        name: 'here',
        vendor: 'IBM',
        product: '3573-TL',
        variant: '',
        serial: 'HERE0001',
        drive_model: 'ULT3580-TD8',
        drive_serials: [],
        num_drives: 1,
        num_slots: 5,
        num_ie: 1,
        label_prefix: 'HER',
        media_dir: '/p1/HERE0001',
        home_pool: 1,
        created_at: isoNow(),
      }),
    );
    remote = (
      await t.app.inject({
        method: 'POST',
        url: '/api/remotes',
        headers: t.admin,
        payload: {
          name: 'r',
          bucket: 'b',
          access_key: 'a',
          secret_key: 's',
          endpoint: '127.0.0.1:1',
          use_ssl: false,
        },
      })
    ).json().id;
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    await t.store.put(keys.drain, { draining: false });
    await t.store.delete(keys.jobs.one(1));
    await t.store.delete(keys.poolStatus.one(2));
  });

  const libraries = async () => (await t.store.list(keys.libraries.prefix, LibrarySpec)).items.length;

  it.each([
    [{}, /remote_id/],
    [{ remote_id: 1, system_name: 'x', pool_id: 2 }, /library_serial/],
  ])('400 for a malformed body %j', async (body, message) => {
    const res = await recover(body);
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(message);
  });

  it('409 while a graceful restart drains', async () => {
    await t.store.put(keys.drain, { draining: true });
    const res = await recover(valid());
    expect(res.statusCode).toBe(409);
    // The draining refusal comes before the body is looked at, as it did when the route parsed by hand.
    expect((await recover({ remote_id: 'x' })).statusCode).toBe(409);
  });

  it('400 while a job is active', async () => {
    await t.store.put(
      keys.jobs.one(1),
      Job.parse({
        id: 1,
        kind: 'export',
        state: 'uploading',
        label: 'HER001L8',
        library: 1,
        remote_id: remote,
        generation: '20260101T000000Z',
        bytes_done: 0,
        chunks_done: 0,
        detail: '',
        created_at: isoNow(),
        updated_at: isoNow(),
      }),
    );
    const res = await recover(valid());
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/job/);
  });

  it('400 when the serial exists here, the pool is in use or not active, or the remote is unknown', async () => {
    await t.store.put(keys.poolStatus.one(2), { id: 2, node: 'n1', state: 'active', detail: '' });
    for (const [patch, message] of [
      [{ library_serial: 'HERE0001' }, /exists here/],
      [{ pool_id: 1 }, /already homes/],
      [{ pool_id: 9 }, /names no pool/],
      [{ remote_id: 99 }, /no such remote/],
    ] as const) {
      const res = await recover({ ...valid(), ...patch });
      expect(res.statusCode, JSON.stringify(patch)).toBe(400);
      expect(res.json().error.message).toMatch(message);
    }
    await t.store.delete(keys.poolStatus.one(2));
    const inactive = await recover(valid());
    expect(inactive.statusCode).toBe(400);
    expect(inactive.json().error.message).toMatch(/not active/);
    expect(await libraries()).toBe(1);
  });
});
