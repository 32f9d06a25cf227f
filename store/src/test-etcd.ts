import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts, startEtcd, type EtcdProcess } from './etcd-process.js';

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
