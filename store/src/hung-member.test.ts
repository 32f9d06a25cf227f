import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventRecord, keys } from '@vtl/api';
import { EventJournal } from './event-journal.js';
import { Store } from './store.js';
import { startTestCluster, type ClusterMember, type TestCluster } from './testing/etcd-cluster.js';
import { freePort } from '@vtl/api/testing/free-port';
import { freezeGapBound, freezeUnderLoad, longestGap, MAX_FREEZE_GAP_MS } from './testing/member-freeze.js';

/** Inside issue 35's 5–15 s, short enough to keep the test quick. */
const FREEZE_MS = 6_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** SIGSTOP reaches a process's threads one by one: waits until every one is stopped. */
async function allThreadsStopped(pid: number): Promise<void> {
  const state = async (tid: string) =>
    (await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => ') T')).split(') ')[1]?.[0];
  for (;;) {
    const states = await Promise.all((await readdir(`/proc/${pid}/task`)).map(state));
    if (states.every((s) => s === 'T' || s === 't')) return;
    await sleep(5);
  }
}

/**
 * Journals an event, writes then reads back a record every 100 ms, watching the prefix and
 * holding a 5 s lease, while `member` is frozen (SIGSTOP: it keeps its connections open and
 * answers nothing).
 */
async function freezeWhileBusy(store: Store, cluster: TestCluster, member: ClusterMember, label: string) {
  const prefix = `/t/hung/${label}/`;
  const written = new Set<string>();
  const watched = new Map<string, number>();
  const watch = await store.watch(prefix, {}, (e) => watched.set(e.key, Date.now()));
  const journal = new EventJournal(store);
  const lease = await store.lease(5);
  const outcome = await freezeUnderLoad({
    ...cluster.hanging(member),
    freezeMs: FREEZE_MS,
    call: async (i) => {
      const key = `${prefix}${i}`;
      journal.record({ kind: 'probe', subject: `${label}${i}` });
      await store.put(key, { i });
      written.add(key);
      const got = await store.get(key, z.object({ i: z.number() }));
      return got?.value.i === i ? undefined : `read back ${JSON.stringify(got)}`;
    },
  });
  await journal.recorded();
  const events = (await store.list(keys.events.prefix, EventRecord)).items
    .map((e) => e.value)
    .filter((e) => e.kind === 'probe' && e.subject.startsWith(label))
    .sort((a, b) => a.id - b.id)
    .map((e) => e.subject);
  const journalInOrderOnce = events.length === outcome.calls && events.every((s, i) => s === `${label}${i}`);
  await sleep(500); // the last writes' events
  await watch.close();
  const leaseLoss = lease.loss;
  await lease.revoke();
  return {
    ...outcome,
    watchGapMs: longestGap([...watched.values()], outcome.frozeAt, outcome.thawedAt),
    unseen: [...written].filter((k) => !watched.has(k)),
    leaseLoss,
    journalInOrderOnce,
    journaled: events.length,
  };
}

/**
 * Issue 35: one etcd member of three hung (not dead) costs at most ~2 s: calls move to another
 * member after FAILOVER_AFTER_MS, the watch moves from its next revision, the lease is kept
 * alive through the others. Before the member pool: one call in five failed at its 5 s
 * deadline, the watch stalled for the whole freeze and the 5 s lease was lost.
 */
describe('a hung etcd member of three', () => {
  let cluster: TestCluster;
  let store: Store;
  beforeAll(async () => {
    cluster = await startTestCluster(3);
    store = await Store.connect({ endpoints: cluster.endpoints });
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('a frozen follower: every call answers, the watch sees every write, the lease holds', async () => {
    const leader = await cluster.leader();
    const follower = cluster.members.find((m) => m !== leader)!;
    const r = await freezeWhileBusy(store, cluster, follower, 'follower');
    const summary = JSON.stringify({ ...r, unseen: r.unseen.length });
    expect(r.refused).toEqual([]);
    expect(r.unseen).toEqual([]);
    expect(r.journalInOrderOnce, summary).toBe(true);
    expect(r.gapMs, summary).toBeLessThanOrEqual(MAX_FREEZE_GAP_MS);
    expect(r.watchGapMs, summary).toBeLessThanOrEqual(MAX_FREEZE_GAP_MS);
    expect(r.leaseLoss).toBeUndefined();
  }, 30_000);

  /**
   * Nothing can answer before the others elect a new leader (1.1-1.6 s measured on a loaded
   * machine); calls, the watch and the lease's keepalives then answered within 60 ms of it.
   * The lease is kept through the freeze, but etcd itself may revoke it once the leader thaws:
   * etcd 3.4.23 (Debian 12's) lets a leader frozen past a lease's TTL propose its revocation
   * before it steps down (etcd#15247, fixed in 3.4.25). Seen in 3 of 41 runs here (1 of 5 with both
   * cores kept busy): the members answered keepalives with TTL 5 through the freeze and with 0
   * some 30 ms after the thaw, as the thawed member stepped down. So the lease
   * may be lost only for etcd's answer, after the thaw, never for lack of answers.
   */
  it('a frozen leader: calls answer again right after the election, nothing is lost, the lease holds', async () => {
    const r = await freezeWhileBusy(store, cluster, await cluster.leader(), 'leader');
    const summary = JSON.stringify({ ...r, unseen: r.unseen.length });
    expect(r.refused).toEqual([]);
    expect(r.unseen).toEqual([]);
    expect(r.journalInOrderOnce, summary).toBe(true);
    expect(r.electedAfterMs, summary).toBeDefined();
    expect(r.gapMs, summary).toBeLessThanOrEqual(freezeGapBound(r));
    expect(r.watchGapMs, summary).toBeLessThanOrEqual(freezeGapBound(r));
    if (r.leaseLoss) {
      expect(r.leaseLoss.unanswered, summary).toBe(false);
      expect(r.leaseLoss.at, summary).toBeGreaterThanOrEqual(r.thawedAt);
    }
  }, 30_000);

  /**
   * A member that takes connections and answers nothing (hung, or a wrong address that
   * swallows them) must not delay the first contact: the pool was as likely to try it first and
   * wait its FAILOVER_AFTER_MS; connect asks every member at once.
   */
  it('connects at once through the others while a member accepts connections and answers nothing', async () => {
    const port = await freePort();
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    try {
      const took: number[] = [];
      for (let i = 0; i < 8; i++) {
        const started = Date.now();
        const other = await Store.connect({ endpoints: [`http://127.0.0.1:${port}`, cluster.endpoints[0]!] });
        took.push(Date.now() - started);
        await other.close();
      }
      // Before: about one connect in two took the 1 s attempt on the silent member first.
      expect(Math.max(...took), took.join(' ')).toBeLessThan(500);
    } finally {
      silent.close();
    }
  }, 30_000);

  /**
   * A put that timed out on a frozen member stays in its socket and is applied once the member
   * thaws (4 of 12 landed over the newer value before puts were guarded). Eight tries, so an
   * unguarded put fails this about 24 times in 25.
   */
  it('a put that timed out on a frozen member does not land over a newer write once it thaws', async () => {
    const leader = await cluster.leader();
    const follower = cluster.members.find((m) => m !== leader)!;
    const stuck = await Store.connect({ endpoints: [follower.endpoint], deadlineMs: 300 });
    const V = z.object({ v: z.string() });
    const after: string[] = [];
    try {
      for (let i = 0; i < 8; i++) {
        const key = `/t/stale/${i}`;
        await stuck.put(key, { v: 'before' });
        process.kill(follower.pid, 'SIGSTOP');
        await allThreadsStopped(follower.pid);
        await expect(stuck.put(key, { v: 'late' }), String(i)).rejects.toThrow(/did not answer|unreachable/);
        await store.put(key, { v: 'newer' });
        process.kill(follower.pid, 'SIGCONT');
        await sleep(1_000);
        after.push((await store.get(key, V))?.value.v ?? 'absent');
      }
    } finally {
      process.kill(follower.pid, 'SIGCONT');
      await stuck.close();
    }
    expect(after).toEqual(Array(8).fill('newer'));
  }, 60_000);

  /**
   * Freezes a follower, runs `late` through a store that knows only it (so the attempt times
   * out in its socket), makes `newer` through the others, thaws it, and returns `check()`
   * a second later; eight rounds, as for put above.
   */
  async function lateAttempts<T>(rounds: {
    before: (stuck: Store, i: number) => Promise<unknown>;
    late: (stuck: Store, i: number) => Promise<unknown>;
    newer: (i: number) => Promise<unknown>;
    check: (i: number) => Promise<T>;
  }): Promise<T[]> {
    const leader = await cluster.leader();
    const follower = cluster.members.find((m) => m !== leader)!;
    const stuck = await Store.connect({ endpoints: [follower.endpoint], deadlineMs: 300 });
    const after: T[] = [];
    try {
      for (let i = 0; i < 8; i++) {
        await rounds.before(stuck, i);
        process.kill(follower.pid, 'SIGSTOP');
        await allThreadsStopped(follower.pid);
        await expect(rounds.late(stuck, i), String(i)).rejects.toThrow(/did not answer|unreachable/);
        await rounds.newer(i);
        process.kill(follower.pid, 'SIGCONT');
        await sleep(1_000);
        after.push(await rounds.check(i));
      }
    } finally {
      process.kill(follower.pid, 'SIGCONT');
      await stuck.close();
    }
    return after;
  }

  it('a deletePrefix that timed out on a frozen member does not delete a newer record once it thaws', async () => {
    const V = z.object({ v: z.string() });
    const after = await lateAttempts({
      before: (stuck, i) => stuck.put(`/t/stale-prefix/${i}/old`, { v: 'old' }),
      late: (stuck, i) => stuck.deletePrefix(`/t/stale-prefix/${i}/`),
      newer: (i) => store.put(`/t/stale-prefix/${i}/new`, { v: 'newer' }),
      check: async (i) => (await store.get(`/t/stale-prefix/${i}/new`, V))?.value.v ?? 'absent',
    });
    expect(after).toEqual(Array(8).fill('newer'));
  }, 60_000);

  it('a transaction without comparisons that timed out on a frozen member does not land over a newer write', async () => {
    const V = z.object({ v: z.string() });
    const after = await lateAttempts({
      before: (stuck, i) => stuck.put(`/t/stale-txn/${i}`, { v: 'before' }),
      late: (stuck, i) => stuck.transaction().put(`/t/stale-txn/${i}`, { v: 'late' }).commit(),
      newer: (i) => store.put(`/t/stale-txn/${i}`, { v: 'newer' }),
      check: async (i) => (await store.get(`/t/stale-txn/${i}`, V))?.value.v ?? 'absent',
    });
    expect(after).toEqual(Array(8).fill('newer'));
  }, 60_000);
});
