import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../store.js';
import { startTestStores, type TestEtcd, type TestStores } from '../test-etcd.js';

/** A test etcd and its stores, there from the file's (or describe's) beforeAll to its afterAll. */
export interface UsedTestStore {
  readonly etcd: TestEtcd;
  /** The first store. */
  readonly store: Store;
  /** All `count` stores connected to the etcd (two for races and elections). */
  readonly stores: Store[];
}

/**
 * Registers the beforeAll that starts a test etcd with `count` connected stores and the
 * afterAll that closes them and stops it; call it before the hooks that use them (vitest runs
 * beforeAll hooks in order and afterAll hooks in reverse, so theirs run while the store is up).
 * Its own entry (`@vtl/store/testing/use-test-store`): it imports vitest, which a benchmark
 * run by plain node cannot load.
 */
export function useTestStore(count = 1): UsedTestStore {
  let started: TestStores | undefined;
  beforeAll(async () => {
    started = await startTestStores(count);
  });
  afterAll(async () => {
    await started?.stop();
    started = undefined;
  });
  const running = (): TestStores => {
    if (!started) throw new Error('the test store exists only between beforeAll and afterAll');
    return started;
  };
  return {
    get etcd() {
      return running().etcd;
    },
    get store() {
      return running().stores[0]!;
    },
    get stores() {
      return running().stores;
    },
  };
}
