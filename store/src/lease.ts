import { castGrpcError, EtcdLeaseInvalidError, type Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import type { MemberPool } from './members.js';

/** A granted etcd lease, kept alive until revoke(). */
export interface Lease {
  readonly id: string;
  onLost(cb: () => void): void;
  revoke(): Promise<void>;
}

/** Why and when a lease was lost. */
export interface LeaseLoss {
  /**
   * This side gave up: no keepalive was answered for 2/3 of the TTL. Otherwise etcd said the
   * lease is gone (expired, or revoked: etcd 3.4.23, Debian 12's, revokes the leases a frozen
   * leader thinks expired when it thaws, before it steps down; etcd#15247, fixed in 3.4.25).
   */
  unanswered: boolean;
  reason: string;
  at: number;
}

/** How long a revoke may take before close() gives up on it (the lease then expires by TTL). */
const REVOKE_DEADLINE_MS = 2_000;
/**
 * Keepalives at most this far apart (and at a sixth of the TTL for shorter leases): the lease
 * is declared lost after 2/3 TTL without an answer, and an etcd election (1-2 s with etcd's
 * default 1 s election timeout) must fit in what is left after the last answer.
 */
const KEEPALIVE_EVERY_MAX_MS = 500;
/**
 * While a keepalive is unanswered, another round goes out this often, the earlier ones still
 * waiting. Measured with the etcd leader frozen: a keepalive sent to a follower before it
 * learns of the new leader is forwarded to the frozen one and hangs for its whole deadline, so
 * waiting for a round to fail before sending the next lost a 5 s lease (no answer for 3.5 s
 * although a new leader answered 1.1 s into the freeze).
 */
const KEEPALIVE_HEDGE_MS = 250;

/**
 * A granted etcd lease kept alive by our own keepalives, each sent to every member at once
 * and the first answer taken (etcd3's keepalive stream stayed on one member: a frozen one
 * lost the lease). etcd3 also only reported a lost lease after 2×TTL without contact, by which time
 * etcd has expired it and another process may hold what it guarded; we declare it lost after
 * 2/3 TTL without an answer so a leader steps down first.
 */
export class StoreLease implements Lease {
  private lost = false;
  private lostFor: LeaseLoss | undefined;
  private revoked = false;
  private lastOk = Date.now();
  private readonly callbacks: (() => void)[] = [];
  private readonly watchdog: NodeJS.Timeout;
  private keepaliveTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly id: string,
    private readonly pool: MemberPool,
    private readonly ttlSec: number,
    private readonly log: Logger,
    private readonly onFinished: (lease: StoreLease) => void,
  ) {
    const limitMs = (ttlSec * 1000 * 2) / 3;
    this.watchdog = setInterval(
      () => {
        if (Date.now() - this.lastOk > limitMs)
          this.markLost(`no keepalive answer for ${Date.now() - this.lastOk} ms`, true);
      },
      Math.min(250, limitMs / 4),
    );
    this.scheduleKeepalive(this.keepaliveEveryMs());
  }

  /** Grants a lease of ttlSec seconds and starts its keepalives. */
  static async grant(
    pool: MemberPool,
    ttlSec: number,
    log: Logger,
    onFinished: (lease: StoreLease) => void,
  ): Promise<StoreLease> {
    const res = await pool.run(
      (c) => c.leaseClient.leaseGrant({ TTL: ttlSec, ID: 0 }),
      pool.attemptMs * pool.size,
    );
    const id = String(res.ID);
    return new StoreLease(id, pool, ttlSec, log.child({ lease: id, ttlSec }), onFinished);
  }

  private keepaliveEveryMs(): number {
    return Math.min(KEEPALIVE_EVERY_MAX_MS, (this.ttlSec * 1000) / 6);
  }

  private scheduleKeepalive(ms: number): void {
    this.keepaliveTimer = setTimeout(() => void this.keepalive(), ms);
  }

  private get stopped(): boolean {
    return this.lost || this.revoked;
  }

  /**
   * Sends keepalive rounds (each to every member) KEEPALIVE_HEDGE_MS apart until one is
   * answered; resolves with the TTL etcd granted, or undefined once the lease is stopped.
   */
  private keepaliveUntilAnswered(): Promise<number | undefined> {
    return new Promise((resolve) => {
      let answered = false;
      let hedge: NodeJS.Timeout | undefined;
      const round = () => {
        if (answered) return;
        if (this.stopped) {
          answered = true;
          resolve(undefined);
          return;
        }
        hedge = setTimeout(round, KEEPALIVE_HEDGE_MS);
        this.pool
          .first((c) => keepaliveOnce(c, this.id, this.pool.attemptMs))
          .then(
            (ttl) => {
              if (answered) return;
              answered = true;
              clearTimeout(hedge);
              resolve(ttl);
            },
            (err: unknown) => this.log.debug({ err: String(err) }, 'lease keepalive round not answered'),
          );
      };
      round();
    });
  }

  private async keepalive(): Promise<void> {
    if (this.stopped) return;
    const ttl = await this.keepaliveUntilAnswered();
    if (ttl === undefined || this.stopped) return;
    if (ttl <= 0) {
      this.markLost('etcd reported the lease expired');
      return;
    }
    this.lastOk = Date.now();
    this.scheduleKeepalive(this.keepaliveEveryMs());
  }

  get isLost(): boolean {
    return this.lost;
  }

  /** Why and when it was lost; undefined while it is held (or after revoke()). */
  get loss(): LeaseLoss | undefined {
    return this.lostFor;
  }

  /** Registers cb for loss; it runs at once (async) when the lease is already lost. */
  onLost(cb: () => void): void {
    if (this.lost) queueMicrotask(cb);
    else this.callbacks.push(cb);
  }

  /**
   * Marks the lease lost: stops keepalives and revokes it if etcd can still be reached.
   * `unanswered`: this side gave up for lack of answers, rather than being told it is gone.
   */
  markLost(reason: string, unanswered = false): void {
    if (this.lost || this.revoked) return;
    this.lost = true;
    this.lostFor = { unanswered, reason, at: Date.now() };
    this.stop();
    this.log.warn({ reason, unanswered, ttlSec: this.ttlSec }, 'lease lost');
    // Revoking releases what the lease guarded at once if etcd still honours it.
    this.sendRevoke().catch(() => undefined);
    this.onFinished(this);
    for (const cb of this.callbacks.splice(0)) {
      try {
        cb();
      } catch (err) {
        this.log.error({ err }, 'lease onLost callback threw');
      }
    }
  }

  /** Revokes the lease; keys attached to it are deleted by etcd. */
  async revoke(): Promise<void> {
    if (this.revoked) return;
    this.revoked = true;
    this.stop();
    this.onFinished(this);
    if (this.lost) return;
    try {
      await this.sendRevoke();
    } catch (err) {
      // Keepalives are stopped either way, so the lease still ends when its TTL runs out.
      this.log.warn({ err }, 'lease revoke failed; it will expire by TTL');
    }
  }

  private stop(): void {
    clearInterval(this.watchdog);
    clearTimeout(this.keepaliveTimer);
  }

  /** A lease etcd no longer knows is revoked already. */
  private sendRevoke(): Promise<void> {
    return this.pool
      .run((c) => c.leaseClient.leaseRevoke({ ID: this.id }), REVOKE_DEADLINE_MS)
      .then(
        () => undefined,
        (err: unknown) => {
          if (!(err instanceof EtcdLeaseInvalidError)) throw err;
        },
      );
  }
}

/**
 * One keepalive over a stream of its own on this member's client; resolves with the TTL etcd
 * granted (0 or less: the lease is gone). The stream's deadline bounds a silent member.
 */
async function keepaliveOnce(client: Etcd3, id: string, deadlineMs: number): Promise<number> {
  const stream = await client.leaseClient.leaseKeepAlive({ deadline: Date.now() + deadlineMs });
  try {
    return await new Promise<number>((resolve, reject) => {
      stream.on('data', (res) => resolve(Number(res.TTL)));
      // After the answer, the cancel below ends the stream with an error nobody waits for.
      stream.on('error', (err) => reject(castGrpcError(err)));
      stream.write({ ID: id });
    });
  } finally {
    stream.cancel();
  }
}
