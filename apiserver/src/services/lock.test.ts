import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import { startTestStores, type TestStores } from '@vtl/store/testing';
import { z } from 'zod';
import { withLock } from './lock.js';

describe('withLock (named locks in etcd)', () => {
  let t: TestStores;
  let store: Store;
  beforeAll(async () => {
    t = await startTestStores();
    store = t.stores[0]!;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('a second holder waits, then gets 409 with its own message; the lock goes after', async () => {
    const opts = { waitMs: 300, renewing: true, holder: { source: 'team' }, busy: 'An apply is running.' };
    await withLock(
      store,
      'apply-test',
      async () => {
        expect((await store.get(keys.lock('apply-test'), z.unknown()))?.value).toMatchObject({
          source: 'team',
        });
        await expect(withLock(store, 'apply-test', async () => 'second', opts)).rejects.toMatchObject({
          code: 'conflict',
          message: 'An apply is running.',
        });
      },
      opts,
    );
    expect(await store.get(keys.lock('apply-test'), z.unknown())).toBeUndefined();
    expect(await withLock(store, 'apply-test', async () => 'free again')).toBe('free again');
  });
});
