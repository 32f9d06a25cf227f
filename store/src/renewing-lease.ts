import type { Logger } from 'pino';
import type { Lease } from './lease.js';

/** Waits between grant attempts while etcd does not answer; capped so recovery is quick. */
const BACKOFF_MS = [200, 500, 1_000, 2_000];

/**
 * A lease that outlives a store stall: when the current etcd lease is lost (etcd stopped
 * answering for longer than its TTL), it grants a new one as soon as etcd answers again and
 * tells its owners, who rewrite what lived under the old lease. `id` is always the current
 * lease's, so writes after a renewal attach to the new one. onLost fires only on revoke().
 */
export class RenewingLease implements Lease {
  private readonly renewed: (() => void)[] = [];
  private readonly lost: (() => void)[] = [];
  private closed = false;

  private constructor(
    private current: Lease & { markLost?(reason: string): void },
    private readonly grant: () => Promise<Lease>,
    private readonly log: Logger,
  ) {
    this.watch(current);
  }

  /** Grants the first lease (throws while etcd does not answer), then keeps one alive. */
  static async start(grant: () => Promise<Lease>, log: Logger): Promise<RenewingLease> {
    return new RenewingLease(await grant(), grant, log);
  }

  get id(): string {
    return this.current.id;
  }

  /** cb runs after every renewal: rewrite the records that lived under the old lease. */
  onRenewed(cb: () => void): void {
    this.renewed.push(cb);
  }

  onLost(cb: () => void): void {
    this.lost.push(cb);
  }

  /** A write was refused for an expired lease: renew now rather than at the next keepalive. */
  markLost(reason: string): void {
    this.current.markLost?.(reason);
  }

  async revoke(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.current.revoke();
    for (const cb of this.lost.splice(0)) cb();
  }

  private watch(lease: Lease): void {
    lease.onLost(() => {
      if (this.closed || lease !== this.current) return;
      void this.renew();
    });
  }

  private async renew(): Promise<void> {
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        const next = await this.grant();
        if (this.closed) {
          await next.revoke();
          return;
        }
        this.current = next;
        this.watch(next);
        this.log.info({ lease: next.id, attempts: attempt + 1 }, 'lease renewed after it was lost');
        for (const cb of this.renewed) {
          try {
            cb();
          } catch (err) {
            this.log.error({ err }, 'lease onRenewed callback threw');
          }
        }
        return;
      } catch (err) {
        if (attempt === 0) this.log.warn({ err }, 'lease lost; granting a new one once etcd answers');
        await new Promise((r) => setTimeout(r, BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]));
      }
    }
  }
}
