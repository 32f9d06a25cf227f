import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { CatalogEntry, Op, RemoteObjects, RemoteRecord, isoNow, keys, type OpKind } from '@vtl/api';
import { s3For } from '@vtl/offsite';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { startOpRunner, watchOpUntilFinished } from '@vtl/reconcile';
import { EventJournal, Store } from '@vtl/store';
import { startTestEtcd, type TestEtcd } from '@vtl/store/testing';
import { REMOTE_OPS_EXECUTOR } from './index.js';
import { catalogRebuildOp, remoteObjectsDeleteOp, remoteObjectsListOp, remoteTestOp } from './remote-ops.js';

const GEN = '20260101T000000Z';

/** The remote operations on a real etcd and a real RGW, through the op runner as in the controller. */
describe('remote operations (real etcd, real RGW)', () => {
  let etcd: TestEtcd;
  let rgw: TestRgw;
  let store: Store;
  let runner: { stop(): Promise<void> };
  let nextOp = 1000;

  beforeAll(async () => {
    [etcd, rgw] = await Promise.all([startTestEtcd(), startTestRgw()]);
    store = await Store.connect({
      endpoints: [etcd.endpoint],
      sealingKeyFile: etcd.sealingKeyFile,
      logger: pino({ level: 'silent' }),
    });
    const remote: RemoteRecord = {
      id: 1,
      name: 'rgw',
      endpoint: rgw.endpoint,
      region: rgw.region,
      bucket: rgw.bucket,
      prefix: '',
      access_key: rgw.access_key,
      use_ssl: false,
      path_style: true,
      created_at: isoNow(),
      last_test_at: '',
      last_test_ok: false,
      last_test_detail: '',
    };
    await store.put(keys.remotes.one(1), remote);
    await store.put(keys.remoteSecrets.one(1), { secret_key: rgw.secret_key });
    // Two generation folders without a manifest (interrupted exports) and a loose object.
    const s3 = s3For(rgw.remote());
    for (const key of [
      `site/SER1/AAA001L8/${GEN}/chunk-00000.tar.zst`,
      `site/SER1/AAA002L8/${GEN}/chunk-00000.tar.zst`,
      `site/SER1/AAA002L8/${GEN}/chunk-00001.tar.zst`,
      'notes.txt',
    ])
      await s3.send(new PutObjectCommand({ Bucket: rgw.bucket, Key: key, Body: 'x', ContentLength: 1 }));
    s3.destroy();
    runner = await startOpRunner({
      store,
      journal: new EventJournal(store),
      executor: REMOTE_OPS_EXECUTOR,
      logger: pino({ level: 'silent' }),
      workers: 2,
      handlers: {
        remote_test: remoteTestOp(store),
        // Parts of two objects, so the listing really spreads over several records.
        remote_objects_list: remoteObjectsListOp(store, 2),
        remote_objects_delete: remoteObjectsDeleteOp(store),
        catalog_rebuild: catalogRebuildOp(store),
      },
    });
  }, 300_000);
  afterAll(async () => {
    await runner?.stop();
    await store?.close();
    await rgw?.stop();
    await etcd?.stop();
  });

  /** Records an op as the apiserver does and waits for its outcome. */
  async function run(kind: OpKind, params: Record<string, unknown>): Promise<Op> {
    const id = nextOp++;
    await store.put(keys.ops.one(id), {
      id,
      kind,
      executor: REMOTE_OPS_EXECUTOR,
      params,
      state: 'pending',
      steps: [],
      requested_by: 'test',
      created_at: isoNow(),
    } satisfies Op);
    const op = await watchOpUntilFinished(store, id, 60_000);
    expect(op?.state, JSON.stringify(op?.error)).toMatch(/succeeded|failed/);
    return op as Op;
  }

  it('tests the remote and records the outcome on it', async () => {
    const op = await run('remote_test', { remote_id: 1 });
    expect(op.result).toMatchObject({ ok: true });
    const remote = (await store.get(keys.remotes.one(1), RemoteRecord))?.value;
    expect(remote).toMatchObject({
      last_test_ok: true,
      last_test_detail: (op.result as { detail: string }).detail,
    });
  });

  it('lists every object into result parts', async () => {
    const op = await run('remote_objects_list', { remote_id: 1 });
    expect(op.state).toBe('succeeded');
    expect(op.result).toEqual({ parts: 2, count: 4 });
    const parts = await store.list(keys.opResults.of(op.id), RemoteObjects.shape.objects);
    expect(parts.items).toHaveLength(2);
    const keysListed = parts.items.flatMap((p) => p.value.map((o) => o.key));
    expect(keysListed.sort()).toEqual([
      'notes.txt',
      `site/SER1/AAA001L8/${GEN}/chunk-00000.tar.zst`,
      `site/SER1/AAA002L8/${GEN}/chunk-00000.tar.zst`,
      `site/SER1/AAA002L8/${GEN}/chunk-00001.tar.zst`,
    ]);
  });

  it('rebuilds the catalog: stale entries go, interrupted folders are reported incomplete', async () => {
    const stale: CatalogEntry = {
      remote_id: 1,
      system_name: 'site',
      library_serial: 'OLD',
      cart_label: 'OLD001L8',
      generation: GEN,
      logical_bytes: 1,
      stored_bytes: 1,
      chunk_count: 1,
      exported_at: isoNow(),
      synced_at: isoNow(),
    };
    await store.put(keys.catalog.one(1, 'site', 'OLD', 'OLD001L8', GEN), stale);
    const op = await run('catalog_rebuild', { remote_id: 1 });
    expect(op.result).toEqual({
      complete: 0,
      incomplete: [
        { system: 'site', library: 'SER1', label: 'AAA001L8', generation: GEN },
        { system: 'site', library: 'SER1', label: 'AAA002L8', generation: GEN },
      ],
    });
    expect(await store.count(keys.catalog.remote(1))).toBe(0);
  });

  it('deletes one folder and nothing beside it; an unknown remote is 400', async () => {
    const op = await run('remote_objects_delete', { remote_id: 1, prefix: 'site/SER1/AAA002L8/' });
    expect(op.result).toEqual({ deleted: 2 });
    const after = await run('remote_objects_list', { remote_id: 1 });
    expect(after.result).toEqual({ parts: 1, count: 2 });
    const unknown = await run('remote_objects_delete', { remote_id: 9, prefix: 'site/' });
    expect(unknown.state).toBe('failed');
    expect(unknown.error).toMatchObject({
      code: 'bad_request',
      message: expect.stringMatching(/no such remote/),
    });
  });
});
