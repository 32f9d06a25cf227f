import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEtcd, type EtcdProcess } from './etcd-process.js';
import { freePorts } from './free-port.js';
import { Store } from './store.js';

/** A throwaway etcd for tests; stop() also removes its directory. */
export interface TestEtcd extends EtcdProcess {
  /** Holds data/ and etcd.log. */
  dir: string;
  logFile: string;
}

/** Starts an etcd in a fresh temp dir on free ports, for tests of any package. */
export async function startTestEtcd(): Promise<TestEtcd> {
  const dir = await mkdtemp(join(tmpdir(), 'vtl-etcd-'));
  const logFile = join(dir, 'etcd.log');
  const [clientPort, peerPort] = (await freePorts(2)) as [number, number];
  const etcd = await startEtcd({ dataDir: join(dir, 'data'), clientPort, peerPort, logFile });
  const cleanup = async (stop: () => Promise<void>) => {
    await stop();
    await rm(dir, { recursive: true, force: true });
  };
  return {
    ...etcd,
    dir,
    logFile,
    stop: () => cleanup(etcd.stop),
    kill: () => cleanup(etcd.kill),
  };
}

/** A throwaway etcd with `count` connected stores; stop() closes them, then the etcd. */
export interface TestStores {
  etcd: TestEtcd;
  stores: Store[];
  stop(): Promise<void>;
}

/** Starts a test etcd and connects `count` stores to it (two for races and elections). */
export async function startTestStores(count = 1): Promise<TestStores> {
  const etcd = await startTestEtcd();
  const stores = await Promise.all(
    Array.from({ length: count }, () => Store.connect({ endpoints: [etcd.endpoint] })),
  );
  return {
    etcd,
    stores,
    stop: async () => {
      await Promise.all(stores.map((s) => s.close()));
      await etcd.stop();
    },
  };
}
