import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki, startEtcd, type EtcdProcess, type Pki } from '@vtl/etcd-launcher';
import { ensureSealingKeyFile } from '@vtl/sealing';
import { freePorts } from '@vtl/api/testing/free-port';
import { Store } from './store.js';

/** A throwaway etcd for tests; stop() also removes its directory. */
export interface TestEtcd extends EtcdProcess {
  /** Holds data/ and etcd.log. */
  dir: string;
  logFile: string;
  /** A sealing key made for this etcd's stores (records under /vtl/secrets/). */
  sealingKeyFile: string;
  /** With tls: the CA and certificates; the etcd admits only clients presenting one. */
  pki?: Pki;
}

/**
 * Starts an etcd in a fresh temp dir on free ports, for tests of any package. Plaintext by
 * default (fast); tls makes it the appliance's kind: TLS with client-certificate authentication.
 */
export async function startTestEtcd(opts: { tls?: boolean } = {}): Promise<TestEtcd> {
  const dir = await mkdtemp(join(tmpdir(), 'vtl-etcd-'));
  const logFile = join(dir, 'etcd.log');
  const sealingKeyFile = join(dir, 'sealing.key');
  ensureSealingKeyFile(sealingKeyFile);
  const pki = opts.tls ? await ensurePki(join(dir, 'pki')) : undefined;
  const [clientPort, peerPort] = (await freePorts(2)) as [number, number];
  const etcd = await startEtcd({
    dataDir: join(dir, 'data'),
    clientPort,
    peerPort,
    logFile,
    ...(pki ? { tls: pki.files('etcd') } : {}),
  });
  const cleanup = async (stop: () => Promise<void>) => {
    await stop();
    await rm(dir, { recursive: true, force: true });
  };
  return {
    ...etcd,
    dir,
    logFile,
    sealingKeyFile,
    ...(pki ? { pki } : {}),
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
    Array.from({ length: count }, () =>
      Store.connect({ endpoints: [etcd.endpoint], sealingKeyFile: etcd.sealingKeyFile }),
    ),
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
