import type { Etcd3, Lease as EtcdLease } from 'etcd3';
import type { Logger } from 'pino';

/** A granted etcd lease, kept alive until revoke(). */
export interface Lease {
  readonly id: string;
  onLost(cb: () => void): void;
  revoke(): Promise<void>;
}

/** How long a revoke may take before close() gives up on it (the lease then expires by TTL). */
const REVOKE_DEADLINE_MS = 2_000;

/**
 * Wraps an etcd3 lease. etcd3 only reports a lost lease after 2×TTL without contact,
 * by which time etcd has expired it and another process may hold what it guarded; we
 * declare it lost after two missed keepalives (2/3 TTL) so a leader steps down first.
 */
export class StoreLease implements Lease {
  private lost = false;
  private revoked = false;
  private lastOk = Date.now();
  private readonly callbacks: (() => void)[] = [];
  private readonly watchdog: NodeJS.Timeout;

  private constructor(
    readonly id: string,
    private readonly inner: EtcdLease,
    private readonly ttlSec: number,
    private readonly log: Logger,
    private readonly onFinished: (lease: StoreLease) => void,
  ) {
    inner.on('keepaliveSucceeded', () => {
      this.lastOk = Date.now();
    });
    inner.on('lost', (err) => this.markLost(`etcd reported the lease lost: ${err.message}`));
    const limitMs = (ttlSec * 1000 * 2) / 3;
    this.watchdog = setInterval(
      () => {
        if (Date.now() - this.lastOk > limitMs)
          this.markLost(`no keepalive answer for ${Date.now() - this.lastOk} ms`);
      },
      Math.min(250, limitMs / 4),
    );
  }

  /** Grants a lease of ttlSec seconds and starts its keepalives. */
  static async grant(
    client: Etcd3,
    ttlSec: number,
    log: Logger,
    onFinished: (lease: StoreLease) => void,
  ): Promise<StoreLease> {
    const inner = client.lease(ttlSec);
    // etcd3 emits 'lost' on a failed grant too; grant() rejects for us, so swallow the event until wrapped.
    inner.on('lost', () => undefined);
    const id = await inner.grant();
    return new StoreLease(String(id), inner, ttlSec, log.child({ lease: String(id), ttlSec }), onFinished);
  }

  get isLost(): boolean {
    return this.lost;
  }

  /** Registers cb for loss; it runs at once (async) when the lease is already lost. */
  onLost(cb: () => void): void {
    if (this.lost) queueMicrotask(cb);
    else this.callbacks.push(cb);
  }

  /** Marks the lease lost: stops keepalives and revokes it if etcd can still be reached. */
  markLost(reason: string): void {
    if (this.lost || this.revoked) return;
    this.lost = true;
    clearInterval(this.watchdog);
    this.log.warn({ reason, ttlSec: this.ttlSec }, 'lease lost');
    // Revoking releases what the lease guarded at once if etcd still honours it.
    this.inner.revoke({ deadline: Date.now() + REVOKE_DEADLINE_MS }).catch(() => undefined);
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
    clearInterval(this.watchdog);
    this.onFinished(this);
    if (this.lost) return;
    try {
      await this.inner.revoke({ deadline: Date.now() + REVOKE_DEADLINE_MS });
    } catch (err) {
      // Keepalives are stopped either way, so the lease still ends when its TTL runs out.
      this.log.warn({ err }, 'lease revoke failed; it will expire by TTL');
    }
  }
}
