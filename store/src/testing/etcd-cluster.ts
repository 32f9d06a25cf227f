import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEtcd, type EtcdProcess } from '@vtl/etcd-launcher';
import { freePorts } from '@vtl/api/testing/free-port';

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
  /**
   * How freezeUnderLoad hangs `member`: SIGSTOP (it keeps its connections open and answers
   * nothing) and SIGCONT, and whether another member answers and follows a leader other than it.
   */
  hanging(member: ClusterMember): { freeze(): void; thaw(): void; newLeader(): Promise<boolean> };
  stop(): Promise<void>;
}

/**
 * Where the members keep their data: memory (/dev/shm) where there is one. On the test machine's
 * shared disk an fdatasync took over 1 s under other tests' load, long enough for both live
 * members to campaign at once after the leader froze: split votes twice over, 5-6.5 s without
 * a leader (etcd's own, however the client behaves). etcd's docs ask for a disk that syncs in
 * milliseconds; memory is what the tests can count on.
 */
const DATA_PARENT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/** Starts `size` etcd members forming one cluster, as an operator's VTL_ETCD_ENDPOINTS would name. */
export async function startTestCluster(size = 3): Promise<TestCluster> {
  const dir = await mkdtemp(join(DATA_PARENT, 'vtl-etcd-cluster-'));
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
  const ids = new Map<ClusterMember, string>();
  for (const m of members) {
    const status = await memberStatus(m);
    if (status) ids.set(m, status.id);
  }
  return {
    members,
    endpoints: members.map((m) => m.endpoint),
    leader: async () => {
      for (const m of members) {
        const status = await memberStatus(m);
        if (status && status.leader === status.id) return m;
      }
      throw new Error('the cluster has no leader');
    },
    hanging: (hung) => ({
      freeze: () => void process.kill(hung.pid, 'SIGSTOP'),
      thaw: () => void process.kill(hung.pid, 'SIGCONT'),
      newLeader: async () => {
        const views = await Promise.all(members.filter((m) => m !== hung).map(memberStatus));
        return views.some((v) => v !== undefined && v.leader !== '0' && v.leader !== ids.get(hung));
      },
    }),
    stop,
  };
}

/** One member's own view (its id, and the leader it follows: "0" for none); undefined while it does not answer. */
async function memberStatus(m: ClusterMember): Promise<{ id: string; leader: string } | undefined> {
  const status = await fetch(`${m.endpoint}/v3/maintenance/status`, {
    method: 'POST',
    body: '{}',
    signal: AbortSignal.timeout(1_000),
  })
    .then((res) => res.json() as Promise<{ header: { member_id: string }; leader?: string }>)
    .catch(() => undefined); // a frozen member does not answer
  return status && { id: status.header.member_id, leader: status.leader ?? '0' };
}
