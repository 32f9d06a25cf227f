import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEtcd, type EtcdProcess } from '@vtl/etcd-launcher';
import { freePorts } from './free-port.js';

/** One member of a test cluster, with its name and pid for freezing it (SIGSTOP). */
export interface ClusterMember extends EtcdProcess {
  name: string;
}

/** A throwaway etcd cluster of several members on 127.0.0.1; stop() also removes its directory. */
export interface TestCluster {
  members: ClusterMember[];
  endpoints: string[];
  /** The member that currently leads the cluster (asks each member's /v3/maintenance/status). */
  leader(): Promise<ClusterMember>;
  stop(): Promise<void>;
}

/** Starts `size` etcd members forming one cluster, as an operator's VTL_ETCD_ENDPOINTS would name. */
export async function startTestCluster(size = 3): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'vtl-etcd-cluster-'));
  const ports = await freePorts(size * 2);
  const names = Array.from({ length: size }, (_, i) => `m${i}`);
  const peers = names.map((n, i) => `${n}=http://127.0.0.1:${ports[2 * i + 1]}`).join(',');
  const started = await Promise.allSettled(
    names.map(async (name, i) => {
      const etcd = await startEtcd({
        name,
        dataDir: join(dir, name),
        clientPort: ports[2 * i]!,
        peerPort: ports[2 * i + 1]!,
        logFile: join(dir, `${name}.log`),
        extraArgs: [`--initial-cluster=${peers}`, '--initial-cluster-state=new'],
      });
      return { ...etcd, name };
    }),
  );
  const members = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => {
    await Promise.all(members.map((m) => m.stop()));
    await rm(dir, { recursive: true, force: true });
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return {
    members,
    endpoints: members.map((m) => m.endpoint),
    leader: async () => {
      for (const m of members) {
        const status = await fetch(`${m.endpoint}/v3/maintenance/status`, {
          method: 'POST',
          body: '{}',
          signal: AbortSignal.timeout(1_000),
        })
          .then((res) => res.json() as Promise<{ header: { member_id: string }; leader: string }>)
          .catch(() => undefined); // a frozen member does not answer
        if (status && status.leader === status.header.member_id) return m;
      }
      throw new Error('the cluster has no leader');
    },
    stop,
  };
}
