import type { Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import { addRevision } from './codec.js';
import type { StoreLease } from './lease.js';
import { absent, putOp, runTxn } from './txn.js';
import type { Watch, WatchEvent, WatchOptions } from './watch.js';

/** Held leadership of one election. */
export interface Leadership {
  /** cb runs once when leadership is lost (lease lost or campaign key removed); not after resign(). */
  onLost(cb: () => void): void;
  resign(): Promise<void>;
}

/** What a campaign needs from the store. */
export interface ElectionDeps {
  /** One store call under the store deadline, on whichever etcd member answers. */
  run<R>(what: string, fn: (client: Etcd3) => Promise<R>): Promise<R>;
  log: Logger;
  lease(ttlSec: number): Promise<StoreLease>;
  watch(prefix: string, opts: WatchOptions, onEvent: (e: WatchEvent) => void): Promise<Watch>;
}

const MAX_BACKOFF_MS = 5_000;

class LeaseLostError extends Error {}

/**
 * Campaigns like etcd's Go concurrency.Election (keys `<name>/<lease hex>`, the oldest key
 * leads), so `etcdctl elect` sees the same election. Resolves once this candidate leads.
 * A lost lease or an etcd error while waiting starts over with a new lease.
 */
export async function campaign(
  deps: ElectionDeps,
  electionName: string,
  candidateId: string,
  ttlSec: number,
  signal?: AbortSignal,
): Promise<Leadership> {
  const prefix = `${electionName}/`;
  const log = deps.log.child({ election: electionName, candidate: candidateId });
  let backoffMs = 100;
  while (true) {
    signal?.throwIfAborted();
    let lease: StoreLease | undefined;
    try {
      lease = await deps.lease(ttlSec);
      const key = prefix + BigInt(lease.id).toString(16);
      const res = await deps.run('campaigning', (c) =>
        runTxn(c, { compare: [absent(key)], success: [putOp(key, candidateId, lease)] }),
      );
      if (!res.succeeded) throw new Error(`campaign key ${key} exists already`);
      const myRevision = res.header.revision;
      await waitForPredecessors(deps, prefix, myRevision, lease, signal);
      const leadership = new ElectedLeadership(lease, log);
      await leadership.watchOwnKey(deps, key, addRevision(myRevision, 1));
      log.info({ key }, 'elected');
      return leadership;
    } catch (err) {
      await lease?.revoke();
      signal?.throwIfAborted();
      if (!(err instanceof LeaseLostError)) {
        log.warn({ err }, 'campaign failed; retrying');
        await sleep(backoffMs, signal);
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
      }
    }
  }
}

/** Waits until every key created before ours is gone, one predecessor at a time. */
async function waitForPredecessors(
  deps: ElectionDeps,
  prefix: string,
  myRevision: string,
  lease: StoreLease,
  signal?: AbortSignal,
): Promise<void> {
  while (true) {
    const res = await deps.run('reading the election', (c) =>
      c
        .getAll()
        .prefix(prefix)
        .maxCreateRevision(addRevision(myRevision, -1))
        .sort('Create', 'Descend')
        .limit(1)
        .exec(),
    );
    const predecessor = res.kvs[0];
    if (!predecessor) return;
    await waitForDelete(deps, predecessor.key.toString(), addRevision(res.header.revision, 1), lease, signal);
  }
}

/** Resolves when key is deleted (or its history is gone, so the caller re-checks). */
async function waitForDelete(
  deps: ElectionDeps,
  key: string,
  fromRevision: string,
  lease: StoreLease,
  signal?: AbortSignal,
): Promise<void> {
  let watch: Watch | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      onAbort = () => reject(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      lease.onLost(() => reject(new LeaseLostError()));
      deps
        .watch(key, { fromRevision, onError: () => resolve() }, (e) => {
          if (e.type === 'delete' && e.key === key) resolve();
        })
        .then((w) => (watch = w), reject);
    });
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    await watch?.close();
  }
}

class ElectedLeadership implements Leadership {
  private state: 'leading' | 'lost' | 'resigned' = 'leading';
  private readonly callbacks: (() => void)[] = [];
  private watch: Watch | undefined;

  constructor(
    private readonly lease: StoreLease,
    private readonly log: Logger,
  ) {
    lease.onLost(() => this.lose('lease lost'));
  }

  /** Someone deleting our key (an operator, etcdctl) ends leadership as surely as a lost lease. */
  async watchOwnKey(deps: ElectionDeps, key: string, fromRevision: string): Promise<void> {
    this.watch = await deps.watch(
      key,
      { fromRevision, onError: () => this.lose('cannot watch the campaign key') },
      (e) => {
        if (e.type === 'delete' && e.key === key) this.lose('campaign key deleted');
      },
    );
    if (this.state !== 'leading') await this.watch.close();
  }

  onLost(cb: () => void): void {
    if (this.state === 'lost') queueMicrotask(cb);
    else if (this.state === 'leading') this.callbacks.push(cb);
  }

  async resign(): Promise<void> {
    if (this.state !== 'leading') return;
    this.state = 'resigned';
    this.callbacks.length = 0;
    await this.watch?.close();
    await this.lease.revoke();
    this.log.info('resigned');
  }

  private lose(reason: string): void {
    if (this.state !== 'leading') return;
    this.state = 'lost';
    this.log.warn({ reason }, 'leadership lost');
    this.lease.markLost(reason);
    void this.watch?.close();
    for (const cb of this.callbacks.splice(0)) {
      try {
        cb();
      } catch (err) {
        this.log.error({ err }, 'leadership onLost callback threw');
      }
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
