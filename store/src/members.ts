import { keys } from '@vtl/api';
import { Etcd3, type IOptions } from 'etcd3';
import type { Logger } from 'pino';
import { isUnreachable } from './deadline.js';

/**
 * How long one attempt may wait on one member of several before the call moves to the next.
 * A healthy member answers in milliseconds; a frozen one (SIGSTOP, a paused VM, a disk stall)
 * keeps its TCP connection open and never answers, so without this a call waited its whole
 * deadline on it. One second leaves room for a loaded machine's fsync and keeps a freeze to
 * about one second of delay for the calls caught on the frozen member.
 */
export const FAILOVER_AFTER_MS = 1_000;
/** How often each member is asked a linearizable read: how a frozen member is noticed while idle. */
const PROBE_EVERY_MS = 500;
/**
 * How long a probe may take. Shorter than an attempt: a wrong verdict only moves watches to
 * another member and the member back into the order at the next probe, while a quick one
 * moves a watch off a frozen member within a second.
 */
const PROBE_DEADLINE_MS = 500;
/** Waits between rounds over every member while none answers (an election, a restart). */
const ROUND_BACKOFF_MS = [50, 100, 200, 400];

/** One etcd member, with a client of its own so a call or a watch on it stays on it. */
export interface Member {
  readonly endpoint: string;
  readonly client: Etcd3;
  /** false from a failed call or probe until a probe succeeds again. */
  readonly healthy: boolean;
}

class PoolMember implements Member {
  healthy = true;
  /** When it last answered; the order among members none of which is healthy. */
  lastOk = Date.now();
  probing = false;
  constructor(
    readonly endpoint: string,
    readonly client: Etcd3,
    /** Closes the client's gRPC channels (keepChannels turned etcd3's own closing off). */
    readonly closeChannels: () => void,
  ) {}
}

/** The part of etcd3's ConnectionPool (not exported by its types) that keepChannels changes. */
interface Etcd3Host {
  resetAllServices(): void;
}

/**
 * Turns off etcd3's closing of a member's gRPC channels, and returns what closes them.
 *
 * etcd3 closes every channel of a host (KV, Lease, Watch, Maintenance) after any failed unary
 * call and any stream ending in error, a cancelled one included: each lease keepalive round
 * (a stream cancelled once answered) did it, 15 times in 3 s for one idle lease, measured. Calls
 * queued on a closed channel fail ("Channel closed before call started", and their member is
 * marked unhealthy) and the next calls wait for a new channel: name resolution, a connection,
 * a TLS handshake. Harmless on a quiet machine; on a loaded one with the etcd leader frozen,
 * calls spent their attempts "Waiting for LB pick" and ran out of the 5 s deadline (5 of 43
 * calls of six stores over TLS, measured). grpc-js reconnects a channel by itself (the backoff
 * set in Store.connect) and the pool routes around a member that does not answer, so the
 * channels are kept for the client's life.
 */
function keepChannels(client: Etcd3): () => void {
  const pool = (client as unknown as { pool?: { hosts?: Etcd3Host[] } }).pool;
  const hosts = pool?.hosts;
  if (!Array.isArray(hosts) || hosts.some((h) => typeof h.resetAllServices !== 'function'))
    throw new Error(
      'etcd3 changed: its ConnectionPool has no hosts with resetAllServices (store/src/members.ts)',
    );
  const resets = hosts.map((h) => h.resetAllServices.bind(h));
  for (const h of hosts) h.resetAllServices = () => undefined;
  return () => resets.forEach((reset) => reset());
}

/**
 * etcd3's own fault handling, turned off on each member's client: its breaker opened only after
 * three failures and then refused a single-member client for 5 s after the member was back,
 * and its retries stayed within the one member. The pool below does both across members.
 */
const NO_POLICY = {
  // async: etcd3's markFailed() hands it a function that throws, and catches the rejection.
  execute: async <T>(fn: (ctx: { signal: AbortSignal }) => PromiseLike<T> | T) =>
    fn({ signal: new AbortController().signal }),
  onSuccess: () => ({ dispose: () => undefined }),
  onFailure: () => ({ dispose: () => undefined }),
} as unknown as NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/**
 * The etcd members named by VTL_ETCD_ENDPOINTS, each behind its own client, routed around a
 * member that does not answer. etcd3's single client for all members treated a deadline like
 * any failure of one call: the call waited its whole deadline on a frozen member, its breaker
 * needed three such failures, and a watch or lease keepalive stream stayed on the frozen
 * member for as long as the freeze (measured: 10 s of stalled watch, a 5 s lease lost, one
 * call in five failing at its 5 s deadline). Here a call gives a member FAILOVER_AFTER_MS, a
 * failure marks the member unhealthy (its breaker) until a probe answers again, and watches
 * and leases ask the pool for a healthy member and are told when theirs stops answering.
 */
export class MemberPool {
  private readonly members: PoolMember[];
  private preferred: PoolMember;
  private readonly listeners = new Set<() => void>();
  private readonly prober: NodeJS.Timeout | undefined;
  private closed = false;
  /** How long one attempt on one member may take. */
  readonly attemptMs: number;

  constructor(
    endpoints: string[],
    options: Omit<IOptions, 'hosts' | 'defaultCallOptions' | 'faultHandling'>,
    /** The store deadline: with one member it is also the attempt's, there being nowhere else to go. */
    deadlineMs: number,
    private readonly log: Logger,
  ) {
    if (endpoints.length === 0) throw new Error('No etcd endpoints given.');
    this.attemptMs = endpoints.length > 1 ? Math.min(deadlineMs, FAILOVER_AFTER_MS) : deadlineMs;
    this.members = endpoints.map((endpoint) => {
      const client = new Etcd3({
        ...options,
        hosts: [endpoint],
        faultHandling: { host: () => NO_POLICY, global: NO_POLICY },
        // Streams (watch, keepalive) have no deadline: they are watched by the probes instead.
        defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + this.attemptMs }),
      });
      return new PoolMember(endpoint, client, keepChannels(client));
    });
    this.preferred = this.members[Math.floor(Math.random() * this.members.length)]!;
    if (this.members.length > 1) {
      this.prober = setInterval(() => this.members.forEach((m) => void this.probe(m)), PROBE_EVERY_MS);
      this.prober.unref();
    }
  }

  get size(): number {
    return this.members.length;
  }

  /**
   * Runs fn against one member after another until one answers or budgetMs has passed: a
   * member that does not answer (unreachable, past FAILOVER_AFTER_MS) is marked unhealthy and
   * the next is tried; any other error is etcd's answer and is thrown at once.
   */
  async run<R>(fn: (client: Etcd3) => Promise<R>, budgetMs: number): Promise<R> {
    const until = Date.now() + budgetMs;
    for (let round = 0; ; round++) {
      let lastErr: unknown;
      for (const member of this.order()) {
        if (this.closed) throw new Error('The store is closed.');
        const started = Date.now();
        try {
          const result = await fn(member.client);
          this.answered(member);
          return result;
        } catch (err) {
          if (!isUnreachable(err)) throw err;
          lastErr = err;
          this.log.debug(
            {
              member: member.endpoint,
              healthy: member.healthy,
              round,
              ms: Date.now() - started,
              err: String(err),
            },
            'etcd call attempt not answered',
          );
          this.failed(member, err);
        }
        if (Date.now() >= until) throw lastErr;
      }
      await sleep(ROUND_BACKOFF_MS[Math.min(round, ROUND_BACKOFF_MS.length - 1)]!);
      if (Date.now() >= until) throw lastErr;
    }
  }

  /**
   * Runs fn on every member at once and resolves with the first answer: for an idempotent call
   * that must get through quickly whichever member is slow (a lease keepalive: a follower
   * forwards it to the leader, and while a frozen leader is replaced only a new round reaches
   * the new one). Rejects with the last failure when no member answers.
   */
  async first<R>(fn: (client: Etcd3) => Promise<R>): Promise<R> {
    if (this.closed) throw new Error('The store is closed.');
    return Promise.any(
      this.members.map(async (member) => {
        try {
          const result = await fn(member.client);
          this.answered(member);
          return result;
        } catch (err) {
          if (isUnreachable(err)) this.failed(member, err);
          throw err;
        }
      }),
    ).catch((err: unknown) => {
      throw err instanceof AggregateError ? err.errors.at(-1) : err;
    });
  }

  /**
   * first() again after a backoff while no member answers, until budgetMs has passed: for an
   * idempotent call that should be answered by whichever member can, as soon as one can (the
   * first contact: a member that is down or drops packets would otherwise cost run() its
   * FAILOVER_AFTER_MS whenever it happened to come first).
   */
  async firstWithin<R>(fn: (client: Etcd3) => Promise<R>, budgetMs: number): Promise<R> {
    const until = Date.now() + budgetMs;
    for (let round = 0; ; round++) {
      try {
        return await this.first(fn);
      } catch (err) {
        if (!isUnreachable(err) || Date.now() >= until) throw err;
      }
      await sleep(ROUND_BACKOFF_MS[Math.min(round, ROUND_BACKOFF_MS.length - 1)]!);
    }
  }

  /** The member a new stream (watch, keepalive) should use: the preferred one while it is healthy. */
  pick(): Member {
    return this.order()[0]!;
  }

  /** Whether some member other than `member` is healthy: only then is moving off it worth it. */
  hasHealthyOtherThan(member: Member): boolean {
    return this.members.some((m) => m !== member && m.healthy);
  }

  /** cb runs whenever a member turns unhealthy or healthy; returns the unsubscribe function. */
  onHealthChange(cb: () => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.prober);
    this.listeners.clear();
    for (const m of this.members) {
      m.closeChannels();
      m.client.close();
    }
  }

  /** Healthy members first (the preferred one leading), then the others, most recently answering first. */
  private order(): PoolMember[] {
    const others = this.members.filter((m) => m.healthy && m !== this.preferred);
    const healthy = this.preferred.healthy ? [this.preferred, ...others] : others;
    const unhealthy = this.members.filter((m) => !m.healthy).sort((a, b) => b.lastOk - a.lastOk);
    return [...healthy, ...unhealthy];
  }

  private answered(member: PoolMember): void {
    member.lastOk = Date.now();
    if (!this.preferred.healthy) this.preferred = member;
    if (member.healthy) return;
    member.healthy = true;
    this.log.info({ member: member.endpoint }, 'etcd member answers again');
    this.changed();
  }

  private failed(member: PoolMember, err: unknown): void {
    if (this.members.length === 1 || !member.healthy) return;
    member.healthy = false;
    if (this.preferred === member) this.preferred = this.members.find((m) => m.healthy) ?? member;
    this.log.warn(
      { member: member.endpoint, err: String(err) },
      'etcd member does not answer; routing around it',
    );
    this.changed();
  }

  /** A linearizable read of one small key: answers only while the member can reach a quorum. */
  private async probe(member: PoolMember): Promise<void> {
    if (member.probing || this.closed) return;
    member.probing = true;
    try {
      await member.client.kv.range(
        { key: Buffer.from(keys.settings), count_only: true },
        { deadline: Date.now() + Math.min(PROBE_DEADLINE_MS, this.attemptMs) },
      );
      if (!this.closed) this.answered(member);
    } catch (err) {
      if (!this.closed && isUnreachable(err)) this.failed(member, err);
    } finally {
      member.probing = false;
    }
  }

  private changed(): void {
    for (const cb of this.listeners) {
      try {
        cb();
      } catch (err) {
        this.log.error({ err }, 'member health listener threw');
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
