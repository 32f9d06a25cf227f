import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolStatus, isoNow, keys } from '@vtl/api';
import { createPool, deletePool } from '@vtl/domain';
import { waitFor } from '@vtl/store';
import { pino } from 'pino';
import { startPoolReconciler } from './pool-reconciler.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

describe('pool reconciler: the one writer of pool status', () => {
  const t = useTestStore();
  let dir: string;
  let reconciler: Awaited<ReturnType<typeof startPoolReconciler>>;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-pool-reconciler-'));
    reconciler = await startPoolReconciler({
      store: t.store,
      lease: await t.store.lease(60),
      node: 'n1',
      storageMount: path.join(dir, 'storage'),
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await reconciler?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('reports a directory pool active and removes its status once the pool is deleted', async () => {
    const store = t.store;
    const pool = (await createPool(store, (id) => ({
      id,
      name: 'p1',
      node: 'n1',
      path: path.join(dir, 'p1'),
      created_at: isoNow(),
    })))!;
    const status = () => store.get(keys.poolStatus.one(pool.id), PoolStatus);
    await waitFor(async () => (await status())?.value.state === 'active', { timeoutMs: 30_000 });
    expect(await deletePool(store, pool)).toBe(true);
    await waitFor(async () => (await status()) === undefined, { timeoutMs: 30_000 });
    expect(await status()).toBeUndefined();
  });
});
