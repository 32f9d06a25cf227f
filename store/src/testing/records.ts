import {
  Job,
  LibrarySpec,
  NodeStatus,
  splitNodeStatus,
  PoolSpec,
  RemoteRecord,
  isoNow,
  keys,
  type JobInput,
  type ObservedCartridge,
} from '@vtl/api';
import type { z } from 'zod';
import type { Store } from '../store.js';

/**
 * Records as the apiserver and the nodeagent write them, for tests of code that reads them
 * (controllers, routes) without running the writers. Each takes overrides of its defaults.
 */

/** A pool record on node `n1`. */
export async function putTestPool(store: Store, over: Partial<PoolSpec> = {}): Promise<PoolSpec> {
  const pool = PoolSpec.parse({ id: 1, name: 'p1', node: 'n1', path: '/p1', created_at: isoNow(), ...over });
  await store.put(keys.pools.one(pool.id), pool);
  return pool;
}

/** A declared 3573-TL library with one LTO-8 drive on pool 1. */
export async function putTestLibrary(store: Store, over: Partial<LibrarySpec> = {}): Promise<LibrarySpec> {
  const lib = LibrarySpec.parse({
    id: 1,
    name: 'lib1',
    vendor: 'IBM',
    product: '3573-TL',
    variant: '',
    serial: 'SER0001',
    drive_model: 'ULT3580-TD8',
    drive_serials: ['D1'],
    num_drives: 1,
    num_slots: 10,
    num_ie: 2,
    label_prefix: 'ABC',
    media_dir: '/p1/lib1',
    home_pool: 1,
    created_at: isoNow(),
    ...over,
  });
  await store.put(keys.libraries.one(lib.id), lib);
  return lib;
}

/** A remote record (no secret). */
export async function putTestRemote(store: Store, over: Partial<RemoteRecord> = {}): Promise<RemoteRecord> {
  const remote = RemoteRecord.parse({
    id: 1,
    name: 'r1',
    endpoint: '127.0.0.1:1',
    region: '',
    bucket: 'b',
    prefix: '',
    access_key: 'a',
    use_ssl: false,
    path_style: true,
    created_at: isoNow(),
    ...over,
  });
  await store.put(keys.remotes.one(remote.id), remote);
  return remote;
}

/** The live view of node `n1` with a running data plane showing these cartridges. */
export async function putTestNodeStatus(
  store: Store,
  cartridges: z.input<typeof ObservedCartridge>[],
  over: Partial<NodeStatus> = {},
): Promise<NodeStatus> {
  const status = NodeStatus.parse({
    node: 'n1',
    updated_at: isoNow(),
    dataplane: {
      state: 'running',
      generation: 1,
      pid: 1,
      detail: '',
      started_at: isoNow(),
      iscsi_portal: '',
    },
    libraries: [],
    cartridges,
    ...over,
  });
  // Stored split, as the nodeagent publishes it: the node record and one record per library.
  const { node, libraries } = splitNodeStatus(status);
  const txn = store.transaction().put(keys.nodeStatus.one(status.node), node);
  for (const l of libraries) txn.put(keys.nodeLibraryStatus.one(status.node, l.id), l);
  await store.deletePrefix(keys.nodeLibraryStatus.node(status.node));
  await txn.commit();
  return status;
}

/** A job row (not stored): an export of ABC001L8 to remote 1 unless overridden. */
export function testJob(over: Partial<JobInput> = {}): Job {
  return Job.parse({
    id: 1,
    kind: 'export',
    state: 'detected',
    label: 'ABC001L8',
    library: 1,
    remote_id: 1,
    generation: '20260101T000000Z',
    bytes_done: 0,
    chunks_done: 0,
    detail: '',
    created_at: isoNow(),
    updated_at: isoNow(),
    ...over,
  });
}
