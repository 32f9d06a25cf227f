import { describe, expect, it } from 'vitest';
import { keys } from '@vtl/api';
import { z } from 'zod';
import { withLock } from './lock.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

describe('withLock (named locks in etcd)', () => {
  const t = useTestStore();

  it('a second holder waits, then gets 409 with its own message; the lock goes after', async () => {
    const opts = { waitMs: 300, renewing: true, holder: { source: 'team' }, busy: 'An apply is running.' };
    await withLock(
      t.store,
      'apply-test',
      async () => {
        expect((await t.store.get(keys.lock('apply-test'), z.unknown()))?.value).toMatchObject({
          source: 'team',
        });
        await expect(withLock(t.store, 'apply-test', async () => 'second', opts)).rejects.toMatchObject({
          code: 'conflict',
          message: 'An apply is running.',
        });
      },
      opts,
    );
    expect(await t.store.get(keys.lock('apply-test'), z.unknown())).toBeUndefined();
    expect(await withLock(t.store, 'apply-test', async () => 'free again')).toBe('free again');
  });
});
