import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { LibrarySpec, LibraryStatus, Op, PoolSpec, PoolStatus, RemoteRecord, isoNow, keys } from '@vtl/api';
import { writeTopology } from '@vtl/offsite';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { startOpRunner, watchOpUntilFinished } from '@vtl/reconcile';
import { EventJournal, Store } from '@vtl/store';
import { startTestEtcd, type TestEtcd } from '@vtl/store/testing';
import { REMOTE_OPS_EXECUTOR } from './index.js';
import { recoverOp } from './recover.js';

const SYSTEM = 'site-a';
const SERIAL = 'RECSER01';

/**
 * Issue 34 item 4: a recovery streams its own steps (declare, activation, imports queued) as
 * `maint_step` events under `recover#<id>` and ends with `maint_done`, as apply does; the
 * apply it records streams under its own `apply#<id>`. Real etcd, real RGW, the recover handler
 * through the op runner as in the controller. The apply it waits on is carried out by a
 * stand-in for the data plane (it records one step and marks the library active), since no
 * nodeagent runs here; e2e/src/offsite-recover.test.ts recovers through the real one.
 */
describe('recovery streams its own maintenance steps (real etcd, real RGW)', () => {
  let etcd: TestEtcd;
  let rgw: TestRgw;
  let store: Store;
  let journal: EventJournal;
  const runners: { stop(): Promise<void> }[] = [];

  beforeAll(async () => {
    [etcd, rgw] = await Promise.all([startTestEtcd(), startTestRgw()]);
    const logger = pino({ level: 'silent' });
    store = await Store.connect({ endpoints: [etcd.endpoint], sealingKeyFile: etcd.sealingKeyFile, logger });
    journal = new EventJournal(store);
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
    await store.put(
      keys.pools.one(1),
      PoolSpec.parse({ id: 1, name: 'p', node: 'n1', path: '/p1', created_at: isoNow() }),
    );
    await store.put(
      keys.poolStatus.one(1),
      PoolStatus.parse({ id: 1, node: 'n1', state: 'active', detail: '' }),
    );
    // Two cartridges whose exports never completed: the recovery says so and queues no import.
    await writeTopology(rgw.remote(), {
      system: SYSTEM,
      library_serial: SERIAL,
      name: 'site-a-lib',
      product: '3573-TL',
      vendor: 'IBM',
      drive_product: 'ULT3580-TD8',
      num_drives: 1,
      num_slots: 6,
      num_map: 1,
      label_prefix: 'REC',
      written_at: isoNow(),
      cartridges: [
        { label: 'REC001L8', home_slot: 1 },
        { label: 'REC002L8', home_slot: 2 },
      ],
    });
    runners.push(
      await startOpRunner({
        store,
        journal,
        executor: REMOTE_OPS_EXECUTOR,
        logger,
        handlers: { recover: recoverOp(store, journal) },
      }),
      await startOpRunner({
        store,
        journal,
        executor: 'controller',
        logger,
        handlers: {
          apply: async (op, ctx) => {
            await ctx.step('Checked: the stand-in data plane serves every library');
            for (const lib of (await store.list(keys.libraries.prefix, LibrarySpec)).items)
              await store.put(
                keys.libraryStatus.one(lib.value.id),
                LibraryStatus.parse({ id: lib.value.id, state: 'active' }),
              );
            return { steps: (await store.get(keys.ops.one(op.id), Op))?.value.steps ?? [] };
          },
        },
      }),
    );
  }, 300_000);
  afterAll(async () => {
    for (const r of runners) await r.stop();
    await store?.close();
    await rgw?.stop();
    await etcd?.stop();
  });

  it('streams declare, activation and imports as maint_step of recover#<id>, then maint_done', async () => {
    const id = 500;
    await store.put(keys.ops.one(id), {
      id,
      kind: 'recover',
      executor: REMOTE_OPS_EXECUTOR,
      params: { request: { remote_id: 1, system_name: SYSTEM, library_serial: SERIAL, pool_id: 1 } },
      state: 'pending',
      steps: [],
      requested_by: 'test',
      created_at: isoNow(),
    } satisfies Op);
    const op = await watchOpUntilFinished(store, id, 120_000);
    expect(op?.state, JSON.stringify(op?.error)).toBe('succeeded');

    const subject = `recover#${id}`;
    const steps = (await journal.search({ kind: 'maint_step', limit: 100 }))
      .filter((e) => e.subject === subject)
      .reverse()
      .map((e) => e.detail);
    expect(steps).toEqual([
      'Declared library 1 (site-a-lib) from topology.json',
      expect.stringMatching(/^Activating library 1: apply #\d+/),
      'REC001L8: no complete generation in the bucket; not imported',
      'REC002L8: no complete generation in the bucket; not imported',
      'Queued 0 imports',
    ]);
    // The apply's own steps stream under its subject, not twice under the recovery's.
    const applyId = (op?.progress as { apply_op: number }).apply_op;
    const applySteps = (await journal.search({ kind: 'maint_step', limit: 100 })).filter(
      (e) => e.subject === `apply#${applyId}`,
    );
    expect(applySteps.map((e) => e.detail)).toEqual([
      'Checked: the stand-in data plane serves every library',
    ]);

    const done = (await journal.search({ kind: 'maint_done', limit: 100 })).filter(
      (e) => e.subject === subject,
    );
    expect(done).toHaveLength(1);
    expect(done[0]!.data).toMatchObject({ ok: true, steps: op?.steps });
    expect(op?.steps).toEqual(
      expect.arrayContaining([...steps, 'Checked: the stand-in data plane serves every library']),
    );
  });
});
