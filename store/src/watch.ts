import { VtlError } from '@vtl/api';
import type { IWatchResponse, Watcher } from 'etcd3';
import type { Logger } from 'pino';
import { addRevision, decodeRaw } from './codec.js';
import type { Member, MemberPool } from './members.js';

/** One change under a watched prefix; values are parsed JSON, not schema-checked. */
export type WatchEvent =
  | { type: 'put'; key: string; value: unknown; modRevision: string; createRevision: string }
  | { type: 'delete'; key: string; modRevision: string };

/** A running watch. */
export interface Watch {
  close(): Promise<void>;
}

export interface WatchOptions {
  /** First revision to deliver; omitted = changes after now. */
  fromRevision?: string;
  /** Called once if the watch cannot continue (its history was compacted); the watch is then over. */
  onError?: (err: Error) => void;
  /** Called after each response with the newest revision it covers (skipped events included). */
  onProgress?: (revision: string) => void;
}

const CLOSE_DEADLINE_MS = 2_000;
const MAX_BACKOFF_MS = 5_000;

/**
 * A prefix watch that survives disconnects without gaps. etcd3 resumes a broken watch
 * from the last response header's revision, which skips events when the stream breaks
 * mid-replay; we track the next revision from delivered events and reopen from it.
 * A frozen member keeps its stream open and silent, so the watch also moves, from the same
 * next revision, to another member when the pool finds its member no longer answering.
 */
class ResumingWatch implements Watch {
  private next: string | undefined;
  private watcher: Watcher | undefined;
  private member: Member | undefined;
  private readonly unsubscribe: () => void;
  private closed = false;
  private backoffMs = 100;
  private timer: NodeJS.Timeout | undefined;
  private settleStart!: (err?: Error) => void;
  readonly started: Promise<void>;

  constructor(
    private readonly pool: MemberPool,
    private readonly log: Logger,
    private readonly prefix: string,
    private readonly opts: WatchOptions,
    private readonly onEvent: (e: WatchEvent) => void,
  ) {
    this.next = opts.fromRevision;
    this.started = new Promise((resolve, reject) => {
      this.settleStart = (err) => (err ? reject(err) : resolve());
    });
    this.unsubscribe = pool.onHealthChange(() => this.moveIfStalled());
    this.open();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    clearTimeout(this.timer);
    await this.detach();
  }

  /** Reopens on a healthy member, from the next undelivered revision, when this one stopped answering. */
  private moveIfStalled(): void {
    const member = this.member;
    if (this.closed || !member || member.healthy || !this.pool.hasHealthyOtherThan(member)) return;
    this.log.info(
      { prefix: this.prefix, from: member.endpoint, next: this.next },
      'watch moves off an etcd member that does not answer',
    );
    clearTimeout(this.timer);
    void this.detach();
    this.open();
  }

  private open(): void {
    if (this.closed) return;
    this.member = this.pool.pick();
    const builder = this.member.client.watch().prefix(this.prefix);
    if (this.next !== undefined) builder.startRevision(this.next);
    const watcher = builder.watcher();
    this.watcher = watcher;
    const current = () => this.watcher === watcher && !this.closed;
    watcher.on('connected', (res: IWatchResponse) => {
      if (!current()) return;
      this.backoffMs = 100;
      this.next ??= addRevision(res.header.revision, 1);
      this.settleStart();
    });
    watcher.on('data', (res: IWatchResponse) => {
      if (current()) this.deliver(res);
    });
    watcher.on('disconnected', (err) => {
      if (!current()) return;
      this.log.debug({ err: err.message, prefix: this.prefix }, 'watch disconnected; reopening');
      void this.detach();
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.open(), this.backoffMs);
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    });
    watcher.on('error', (err) => {
      if (!current()) return;
      this.closed = true;
      this.unsubscribe();
      void this.detach();
      const fail = new VtlError(
        'conflict',
        `Cannot watch ${this.prefix} from revision ${this.next}: ${err.message}`,
        {
          reason: 'compacted',
          fromRevision: this.next,
        },
      );
      this.settleStart(fail);
      if (this.opts.onError) this.opts.onError(fail);
      else this.log.error({ err: fail }, 'watch ended');
    });
  }

  private deliver(res: IWatchResponse): void {
    for (const ev of res.events) {
      const key = ev.kv.key.toString();
      const modRevision = ev.kv.mod_revision;
      this.next = addRevision(modRevision, 1);
      let event: WatchEvent;
      if (ev.type === 'Delete') {
        event = { type: 'delete', key, modRevision };
      } else {
        const decoded = decodeRaw(ev.kv.value);
        if (!decoded.ok) {
          this.log.warn({ key }, 'skipping a watch event whose value is not JSON');
          continue;
        }
        event = {
          type: 'put',
          key,
          value: decoded.value,
          modRevision,
          createRevision: ev.kv.create_revision,
        };
      }
      try {
        this.onEvent(event);
      } catch (err) {
        this.log.error({ err, key }, 'watch handler threw');
      }
    }
    // An empty response is a progress notification: everything up to its revision was sent.
    if (res.events.length === 0 && res.header.revision) {
      const after = addRevision(res.header.revision, 1);
      if (this.next === undefined || BigInt(after) > BigInt(this.next)) this.next = after;
    }
    if (this.opts.onProgress && this.next !== undefined) this.opts.onProgress(addRevision(this.next, -1));
  }

  private async detach(): Promise<void> {
    const watcher = this.watcher;
    this.watcher = undefined;
    if (!watcher) return;
    let timer: NodeJS.Timeout | undefined;
    // etcd3 waits for the server to confirm a cancel; do not hang close() on a dead etcd.
    await Promise.race([
      watcher.cancel().catch(() => undefined),
      new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_DEADLINE_MS))),
    ]);
    clearTimeout(timer);
  }
}

/** Starts a watch on prefix; resolves once etcd has accepted it. */
export async function startWatch(
  pool: MemberPool,
  log: Logger,
  prefix: string,
  opts: WatchOptions,
  onEvent: (e: WatchEvent) => void,
): Promise<Watch> {
  if (opts.fromRevision !== undefined) await assertNotCompacted(pool, prefix, opts.fromRevision);
  const watch = new ResumingWatch(pool, log, prefix, opts, onEvent);
  await watch.started;
  return watch;
}

/**
 * etcd accepts a watch from a compacted revision and cancels it only afterwards; a read at
 * that revision fails at once, so the caller gets the error from watch() itself.
 */
async function assertNotCompacted(pool: MemberPool, prefix: string, revision: string): Promise<void> {
  try {
    await pool.run(
      (client) => client.kv.range({ key: Buffer.from(prefix), revision, count_only: true }),
      pool.attemptMs * pool.size,
    );
  } catch (err) {
    if (!/compacted/.test(String(err))) return; // a future revision is fine to watch from
    throw new VtlError('conflict', `Cannot watch ${prefix} from revision ${revision}: it was compacted.`, {
      reason: 'compacted',
      fromRevision: revision,
    });
  }
}
