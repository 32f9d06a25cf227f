import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestStore } from './testing/use-test-store.js';

describe('Txn.ifUnchangedSince', () => {
  const t = useTestStore();

  it('holds while no key under the prefix changed after the listing, and fails once one did', async () => {
    const store = t.store;
    await store.put('/r/jobs/1', 1);
    await store.put('/r/other', 1);
    const { revision } = await store.list('/r/jobs/', z.number());
    await store.put('/r/other', 2); // outside the prefix: does not matter
    expect(await store.transaction().ifUnchangedSince('/r/jobs/', revision).put('/r/a', 1).commit()).toBe(
      true,
    );
    await store.put('/r/jobs/2', 2); // a new record under the prefix
    expect(await store.transaction().ifUnchangedSince('/r/jobs/', revision).put('/r/b', 1).commit()).toBe(
      false,
    );
    expect(await store.get('/r/b', z.number())).toBeUndefined();
  });

  it('holds on an empty prefix', async () => {
    const store = t.store;
    const { revision } = await store.list('/r/none/', z.number());
    expect(await store.transaction().ifUnchangedSince('/r/none/', revision).put('/r/c', 1).commit()).toBe(
      true,
    );
  });
});
