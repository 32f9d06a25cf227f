import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Op, keys, type OpKind } from '@vtl/api';
import { Store } from '@vtl/store';
import { startTestEtcd, type TestEtcd } from '@vtl/store/testing';
import { OP_RETAIN_MS, RESULT_RETAIN_MS, collectOps } from './op-gc.js';

const EXECUTOR = 'controller:remote';
const NOW = Date.parse('2026-11-25T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();

describe('collectOps (real etcd)', () => {
  let etcd: TestEtcd;
  let store: Store;
  beforeAll(async () => {
    etcd = await startTestEtcd();
    store = await Store.connect({ endpoints: [etcd.endpoint], logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await store?.close();
    await etcd?.stop();
  });

  const put = (id: number, kind: OpKind, executor: string, state: Op['state'], finishedAgo?: number) =>
    store.put(keys.ops.one(id), {
      id,
      kind,
      executor,
      params: {},
      state,
      steps: [],
      requested_by: '',
      created_at: ago((finishedAgo ?? 0) + 1000),
      ...(finishedAgo !== undefined ? { finished_at: ago(finishedAgo) } : {}),
    } satisfies Op);

  it('deletes old finished request ops and untaken listings; keeps the rest', async () => {
    await put(1, 'remote_test', EXECUTOR, 'succeeded', OP_RETAIN_MS + 1000); // old: goes
    await put(2, 'catalog_rebuild', EXECUTOR, 'failed', 1000); // recent: stays
    await put(3, 'recover', EXECUTOR, 'running'); // unfinished: stays
    await put(4, 'apply', 'controller', 'succeeded', OP_RETAIN_MS + 1000); // data-plane op: stays
    await put(5, 'pool_path_check', 'node:n1', 'succeeded', OP_RETAIN_MS + 1000); // old: goes
    await put(6, 'remote_objects_list', EXECUTOR, 'succeeded', RESULT_RETAIN_MS + 1000); // parts go
    await put(7, 'remote_objects_list', EXECUTOR, 'succeeded', 1000); // parts stay (route reads)
    for (const id of [6, 7, 8]) await store.put(keys.opResults.part(id, 0), [{ key: 'k', size: 1 }]);

    expect(await collectOps(store, EXECUTOR, NOW)).toEqual({ ops: 2, results: 2 });
    const left = (await store.list(keys.ops.prefix, Op)).items.map((i) => i.value.id);
    expect(left).toEqual([2, 3, 4, 6, 7]);
    expect(await store.count(keys.opResults.of(6))).toBe(0);
    expect(await store.count(keys.opResults.of(7))).toBe(1);
    expect(await store.count(keys.opResults.of(8))).toBe(0); // its op is gone
    expect(await collectOps(store, EXECUTOR, NOW)).toEqual({ ops: 0, results: 0 });
  });
});
