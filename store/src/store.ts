import { keys, VtlError } from '@vtl/api';
import {
  type Etcd3,
  EtcdLeaseInvalidError,
  type ICompare,
  type IKeyValue,
  type IRequestOp,
  type ITxnResponse,
  Range,
} from 'etcd3';
import { pino, type Logger } from 'pino';
import type { z } from 'zod';
import { decodeKv, decodeKvOrSkip, encode, type Versioned } from './codec.js';
import { DEFAULT_STORE_DEADLINE_MS, coarse, withDeadline } from './deadline.js';
import { campaign, type Leadership } from './election.js';
import { startInformer, type Informer, type InformerHandler } from './informer.js';
import { StoreLease, type Lease } from './lease.js';
import { MemberPool } from './members.js';
import { restoreKeyspace, saveKeyspace } from './keyspace-snapshot.js';
import { scan } from './range.js';
import { RenewingLease } from './renewing-lease.js';
import { isEnvelope, isSecretKey, RecordSealing, Sealer, SECRETS_PREFIX } from '@vtl/sealing';
import type { StoreSettings } from './store-settings.js';
import { credentials } from './store-tls.js';
import { WatchCache, type CachedPrefix } from './watch-cache.js';
import {
  absent,
  atModRevision,
  getOp,
  notWrittenAfter,
  notWrittenAfterOps,
  prefixNotWrittenAfter,
  putOp,
  runTxn,
  StoreTxn,
  type Txn,
} from './txn.js';
import { startWatch, type Watch, type WatchEvent, type WatchOptions } from './watch.js';

/** Options of Store.list. */
export interface ListOptions {
  limit?: number;
  /** Descending key order. */
  reverse?: boolean;
  /** Pagination cursor: continue after this key (exclusive) in the listing's direction. */
  after?: string;
  /** Read at this revision (several prefixes as of one moment); default the current one. */
  revision?: string;
}

/** Attempts of an update() before it gives up with a conflict; contention there is rare. */
const UPDATE_ATTEMPTS = 30;
/** nextId() is hot (every job, event, op): many writers may race for one counter. */
const NEXT_ID_ATTEMPTS = 200;

/** The next id of a counter as read (Store.peekId); `take` claims it in the record's transaction. */
export interface IdClaim {
  id: number;
  take: (txn: Txn) => void;
  /** After a lost transaction: whether another writer took the id meanwhile. */
  taken: () => Promise<boolean>;
}

/** Typed, validated access to the etcd records of the appliance. */
export class Store {
  private readonly leases = new Set<StoreLease>();
  private readonly watches = new Set<Watch>();
  /** Aborts pending campaigns on close(); their waits would otherwise never end. */
  private readonly closing = new AbortController();
  private closed = false;
  /** The newest revision this client wrote or read at: read-your-writes caches wait for it. */
  private seen = 0n;

  private constructor(
    private readonly members: MemberPool,
    readonly log: Logger,
    private readonly sealing: RecordSealing,
    /** The most one store call waits for etcd (VTL_STORE_DEADLINE_MS); past it: 503 unavailable. */
    readonly deadlineMs: number,
  ) {}

  /**
   * Connects to etcd and checks that it answers. tls presents a client certificate (the
   * appliance's etcd refuses clients without one); sealingKeyFile seals and opens the records
   * under /vtl/secrets/ (without it they are refused). deadlineMs bounds every later call
   * (default 5 s), so a stalled etcd gives 'unavailable', not a hang. A process passes its
   * configuration's `store` (storeSettingsFromEnv); tests name only what they need.
   */
  static async connect(
    opts: Pick<StoreSettings, 'endpoints'> &
      Partial<Omit<StoreSettings, 'endpoints'>> & {
        logger?: Logger;
      },
  ): Promise<Store> {
    const log = (opts.logger ?? pino({ level: 'silent' })).child({ component: 'store' });
    const deadlineMs = opts.deadlineMs ?? DEFAULT_STORE_DEADLINE_MS;
    const members = new MemberPool(
      opts.endpoints,
      {
        ...(opts.tls ? { credentials: await credentials(opts.tls) } : {}),
        grpcOptions: {
          ...loopbackServerName(opts.endpoints),
          'grpc.max_receive_message_length': 64 * 1024 * 1024,
          // gRPC's default reconnect backoff grows to 2 minutes; an etcd restart should be noticed in seconds.
          'grpc.initial_reconnect_backoff_ms': 100,
          'grpc.max_reconnect_backoff_ms': 2_000,
        },
      },
      deadlineMs,
      log,
    );
    try {
      await members.firstWithin((client) => client.maintenance.status(), deadlineMs);
    } catch (err) {
      members.close();
      const hint = opts.tls
        ? ' Is it running? If so, check that VTL_ETCD_CA_FILE signed its certificate and that its CA signed VTL_ETCD_CERT_FILE.'
        : opts.endpoints.some((e) => e.startsWith('https:'))
          ? ' It wants TLS: set VTL_ETCD_CA_FILE, VTL_ETCD_CERT_FILE and VTL_ETCD_KEY_FILE.'
          : '';
      throw new VtlError(
        'unavailable',
        `etcd at ${opts.endpoints.join(', ')} does not answer: ${String(err)}.${hint}`,
      );
    }
    const sealer = opts.sealingKeyFile ? new Sealer(opts.sealingKeyFile) : undefined;
    return new Store(members, log, new RecordSealing(sealer), deadlineMs);
  }

  /** Reads one record; throws VtlError('internal') naming the key when it fails the schema. */
  async get<T>(key: string, schema: z.ZodType<T>): Promise<Versioned<T> | undefined> {
    const kv = await this.getKv(key);
    return kv ? decodeKv(kv, schema) : undefined;
  }

  /** Lists a prefix sorted by key; records failing the schema are logged and skipped. */
  async list<T>(
    prefix: string,
    schema: z.ZodType<T>,
    opts: ListOptions = {},
  ): Promise<{ items: Versioned<T>[]; revision: string }> {
    const { kvs, revision } = await this.bounded(`listing ${prefix}`, (c) => scan(c, prefix, opts));
    this.noteRevision(revision);
    const items: Versioned<T>[] = [];
    for (const kv of kvs) {
      const opened = this.openOrSkip(kv);
      const item = opened && decodeKvOrSkip(opened, schema, this.log);
      if (item) items.push(item);
    }
    return { items, revision };
  }

  /** The keys under prefix, sorted. */
  async listKeys(prefix: string): Promise<string[]> {
    const { kvs } = await this.bounded(`listing ${prefix}`, (c) => scan(c, prefix, { keysOnly: true }));
    return kvs.map((kv) => kv.key.toString());
  }

  /** How many keys are under prefix. */
  async count(prefix: string): Promise<number> {
    return this.bounded(`counting ${prefix}`, (c) => c.getAll().prefix(prefix).count());
  }

  /** Creates the record if the key is absent; undefined when it exists. */
  async create<T>(key: string, value: T, opts: { lease?: Lease } = {}): Promise<Versioned<T> | undefined> {
    const res = await this.txn(
      { compare: [absent(key)], success: [putOp(key, value, opts.lease, this.sealing)] },
      opts.lease,
    );
    if (!res.succeeded) return undefined;
    return { key, value, modRevision: res.header.revision, createRevision: res.header.revision };
  }

  /**
   * Unconditional write for single-writer records; returns the new mod revision.
   *
   * Each attempt only writes while the key was last written at or before a revision this
   * client has seen. An attempt that did not answer in time is retried on another member, but
   * it may still be applied later: a member frozen with it unread applies it once thawed (4 of
   * 12 such puts landed, measured), which would put an old value back over newer writes. The
   * guard makes that late attempt fail. When the key was written since (by another writer, or
   * by an earlier attempt of this call that did land), the write is made again at the revision
   * the refusal reports, unless the key already holds this value.
   */
  async put<T>(key: string, value: T, opts: { lease?: Lease } = {}): Promise<string> {
    let since = this.seen.toString();
    for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt++) {
      const res = await this.txn(
        {
          compare: [notWrittenAfter(key, since)],
          success: [putOp(key, value, opts.lease, this.sealing)],
          failure: [getOp(key)],
        },
        opts.lease,
      );
      if (res.succeeded) return res.header.revision;
      const kv = res.responses[0]?.response_range.kvs[0];
      const sameLease = (kv?.lease ?? '0') === (opts.lease?.id ?? '0');
      if (kv && sameLease && this.openOrSkip(kv)?.value.toString() === encode(value)) return kv.mod_revision;
      since = res.header.revision;
    }
    throw new VtlError(
      'conflict',
      `${key} kept changing under ${UPDATE_ATTEMPTS} attempts to write it; retry.`,
      {
        key,
      },
    );
  }

  /** Writes only if the record is still at modRevision. */
  async casPut<T>(
    key: string,
    value: T,
    modRevision: string,
    opts: { lease?: Lease } = {},
  ): Promise<boolean> {
    const res = await this.txn(
      {
        compare: [atModRevision(key, modRevision)],
        success: [putOp(key, value, opts.lease, this.sealing)],
      },
      opts.lease,
    );
    return res.succeeded;
  }

  /**
   * Read-modify-write with compare-and-swap retries. mutate gets the current value (undefined
   * when absent) and returns the new one, or undefined for "no write". An unchanged value on
   * the same lease is not rewritten, so controllers do not wake themselves with no-op writes.
   */
  async update<T>(
    key: string,
    schema: z.ZodType<T>,
    // NoInfer: T comes from the schema alone, so literals in mutate's result keep their enum types.
    mutate: (current: T | undefined) => NoInfer<T> | undefined | Promise<NoInfer<T> | undefined>,
    opts: { lease?: Lease } = {},
  ): Promise<Versioned<T> | undefined> {
    let kv = await this.getKv(key);
    for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt++) {
      const current = kv ? decodeKv(kv, schema) : undefined;
      const next = await mutate(current?.value);
      if (next === undefined) return current;
      const sameLease = (kv?.lease ?? '0') === (opts.lease?.id ?? '0');
      if (kv && current && sameLease && encode(next) === kv.value.toString()) return current;
      const res = await this.txn(
        {
          compare: [kv ? atModRevision(key, kv.mod_revision) : absent(key)],
          success: [putOp(key, next, opts.lease, this.sealing)],
          failure: [getOp(key)],
        },
        opts.lease,
      );
      if (res.succeeded) {
        const rev = res.header.revision;
        return { key, value: next, modRevision: rev, createRevision: kv?.create_revision ?? rev };
      }
      const fresh = res.responses[0]?.response_range.kvs[0];
      kv = fresh && this.open(fresh);
      await jitter(attempt);
    }
    throw new VtlError(
      'conflict',
      `${key} kept changing under ${UPDATE_ATTEMPTS} attempts to update it; retry.`,
      {
        key,
      },
    );
  }

  /** Deletes a key (only at modRevision when given); false when nothing was deleted. */
  async delete(key: string, opts: { modRevision?: string } = {}): Promise<boolean> {
    if (opts.modRevision === undefined) {
      // Guarded as put() is: a late attempt must not delete a record written after it.
      let since = this.seen.toString();
      for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt++) {
        const res = await this.txn({
          compare: [notWrittenAfter(key, since)],
          success: [{ request_delete_range: { key: Buffer.from(key) } }],
        });
        if (res.succeeded) return Number(res.responses[0]?.response_delete_range.deleted ?? 0) > 0;
        since = res.header.revision;
      }
      throw new VtlError(
        'conflict',
        `${key} kept changing under ${UPDATE_ATTEMPTS} attempts to delete it; retry.`,
        {
          key,
        },
      );
    }
    const res = await this.txn({
      compare: [atModRevision(key, opts.modRevision)],
      success: [{ request_delete_range: { key: Buffer.from(key) } }],
    });
    return res.succeeded && Number(res.responses[0]?.response_delete_range.deleted ?? 0) > 0;
  }

  /**
   * Deletes every key under a non-empty prefix; returns how many. Guarded as put() is: a late
   * attempt (applied by a member after it thawed) must not delete a record written under the
   * prefix after it; the delete is made again at the revision a refusal reports.
   */
  async deletePrefix(prefix: string): Promise<number> {
    if (prefix === '')
      throw new VtlError('internal', 'Refusing to delete the whole key space: give a prefix.');
    const range = Range.prefix(prefix);
    let since = this.seen.toString();
    for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt++) {
      const res = await this.txn({
        compare: [prefixNotWrittenAfter(prefix, since)],
        success: [{ request_delete_range: { key: range.start, range_end: range.end } }],
      });
      if (res.succeeded) return Number(res.responses[0]?.response_delete_range.deleted ?? 0);
      since = res.header.revision;
    }
    throw new VtlError(
      'conflict',
      `${prefix} kept changing under ${UPDATE_ATTEMPTS} attempts to delete it; retry.`,
      { prefix },
    );
  }

  /**
   * The newest store revision this client wrote, read at or saw in a watch: a cache that has reached it
   * reflects everything this process wrote or was answered from the store (an op result
   * read from etcd, say) so a view never goes back behind what a client was already told.
   */
  get seenRevision(): string {
    return this.seen.toString();
  }

  /** seenRevision as a number, for comparisons on a hot path (no string round trip). */
  get seenRevisionValue(): bigint {
    return this.seen;
  }

  /** A cache of several prefixes from one watch of `root`, for read views (see WatchCache). */
  async watchCache(root: string, prefixes: CachedPrefix[]): Promise<WatchCache> {
    this.assertOpen();
    const source = {
      list: (prefix: string, revision?: string) =>
        this.bounded(`listing ${prefix}`, (c) => scan(c, prefix, revision ? { revision } : {})),
      watch: (prefix: string, opts: WatchOptions, cb: (e: WatchEvent) => void) =>
        startWatch(this.members, this.log, prefix, opts, cb),
    };
    return this.track(await WatchCache.start(source, this.log, root, prefixes));
  }

  /**
   * Starts an all-or-nothing transaction. One committed without comparisons of its own is
   * guarded as put() is: each attempt only writes while none of its keys was written after a
   * revision this client has seen, so a late attempt cannot undo newer writes; it is made
   * again at the revision a refusal reports (rewriting the same values if an earlier attempt
   * did land), and commits true.
   */
  transaction(): Txn {
    return new StoreTxn(async (req, leases) => {
      if (req.compare.length > 0) return this.txn(req, ...leases);
      let since = this.seen.toString();
      for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt++) {
        const res = await this.txn({ ...req, compare: notWrittenAfterOps(req.success, since) }, ...leases);
        if (res.succeeded) return res;
        since = res.header.revision;
      }
      throw new VtlError(
        'conflict',
        `The keys of a transaction kept changing under ${UPDATE_ATTEMPTS} attempts to write them; retry.`,
      );
    }, this.sealing);
  }

  /** The next integer of a named counter (1, 2, ...), unique under concurrency. */
  nextId(counter: string): Promise<number> {
    return this.nextIds(counter, 1);
  }

  /** Reserves `count` consecutive integers of a named counter in one write; returns the first. */
  async nextIds(counter: string, count: number): Promise<number> {
    const key = keys.counter(counter);
    let kv = await this.getKv(key);
    for (let attempt = 1; attempt <= NEXT_ID_ATTEMPTS; attempt++) {
      const current = kv ? Number(JSON.parse(kv.value.toString())) : 0;
      if (!Number.isSafeInteger(current))
        throw new VtlError('internal', `Counter ${key} holds a non-integer.`);
      const res = await this.txn({
        compare: [kv ? atModRevision(key, kv.mod_revision) : absent(key)],
        success: [putOp(key, current + count)],
        failure: [getOp(key)],
      });
      if (res.succeeded) return current + 1;
      kv = res.responses[0]?.response_range.kvs[0];
      await jitter(attempt);
    }
    throw new VtlError('conflict', `Counter ${counter} is too contended; retry.`, { counter });
  }

  /**
   * A counter's next id, to be taken in the transaction that writes the record it names: `take`
   * adds "the counter is still as read" and its bump to that transaction. So a request refused
   * before its commit, or a transaction that loses, leaves the counter as it was (a refused
   * request changes nothing). Callers retry through withNewId.
   */
  async peekId(counter: string): Promise<IdClaim> {
    const key = keys.counter(counter);
    const kv = await this.getKv(key);
    const current = kv ? Number(JSON.parse(kv.value.toString())) : 0;
    if (!Number.isSafeInteger(current)) throw new VtlError('internal', `Counter ${key} holds a non-integer.`);
    const id = current + 1;
    return {
      id,
      take: (txn) => {
        if (kv) txn.ifModRevision(key, kv.mod_revision);
        else txn.ifAbsent(key);
        txn.put(key, id);
      },
      taken: async () => (await this.getKv(key))?.mod_revision !== kv?.mod_revision,
    };
  }

  /**
   * Runs a read-decide-write that creates a record under a new id of `counter` (see peekId)
   * until it commits. `attempt` returns undefined when its transaction lost; it is retried up
   * to `attempts` times when something it compared changed, and without counting when only the
   * id was taken by another creator meanwhile (so racing creators each get the next id in
   * turn). Undefined when it kept losing.
   */
  async withNewId<T>(
    counter: string,
    attempts: number,
    attempt: (next: IdClaim) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    let lost = 0;
    for (let round = 1; round <= NEXT_ID_ATTEMPTS; round++) {
      const next = await this.peekId(counter);
      const done = await attempt(next);
      if (done !== undefined) return done;
      if (!(await next.taken()) && ++lost >= attempts) return undefined;
      await jitter(round);
    }
    return undefined;
  }

  /** Watches a prefix from a revision (default: from now); survives reconnects without gaps. */
  async watch(prefix: string, opts: WatchOptions, onEvent: (e: WatchEvent) => void): Promise<Watch> {
    this.assertOpen();
    const starting = startWatch(this.members, this.log, prefix, opts, this.opening(onEvent));
    try {
      return this.track(await this.bounded(`starting a watch of ${prefix}`, () => starting));
    } catch (err) {
      // A watch that comes up after its caller gave up would run unowned: close it then.
      starting.then((w) => w.close()).catch(() => undefined);
      throw err;
    }
  }

  /** A cached list+watch of a prefix that hands every change to handler. */
  async informer<T>(prefix: string, schema: z.ZodType<T>, handler: InformerHandler<T>): Promise<Informer<T>> {
    this.assertOpen();
    const source = {
      list: this.list.bind(this),
      watch: (p: string, o: WatchOptions, cb: (e: WatchEvent) => void) =>
        startWatch(this.members, this.log, p, o, this.opening(cb)),
    };
    const informer = await startInformer(source, this.log, prefix, schema, handler);
    return this.track(informer);
  }

  /** Grants a lease kept alive until revoke(); onLost fires when keepalives fail or it expires. */
  lease(ttlSec: number): Promise<StoreLease> {
    return this.grantLease(ttlSec);
  }

  /**
   * A lease that is granted anew after a stall made it expire (RenewingLease): for records a
   * process republishes anyway (node and pool status), so a stall never forces an exit.
   */
  renewingLease(ttlSec: number): Promise<RenewingLease> {
    return RenewingLease.start(() => this.grantLease(ttlSec), this.log);
  }

  /** Resolves once this candidate leads the election; opts.signal abandons the campaign. */
  campaign(
    electionName: string,
    candidateId: string,
    ttlSec: number,
    opts: { signal?: AbortSignal } = {},
  ): Promise<Leadership> {
    this.assertOpen();
    const deps = {
      run: <R>(what: string, fn: (c: Etcd3) => Promise<R>) => this.bounded(what, fn),
      log: this.log,
      lease: (ttl: number) => this.grantLease(ttl),
      watch: (prefix: string, o: WatchOptions, cb: (e: WatchEvent) => void) => this.watch(prefix, o, cb),
    };
    const signal = opts.signal ? AbortSignal.any([opts.signal, this.closing.signal]) : this.closing.signal;
    return campaign(deps, electionName, candidateId, ttlSec, signal);
  }

  /** Writes the appliance's records to `file` (updates: the snapshot a rollback restores). */
  async saveSnapshot(file: string, exclude: string[]): Promise<number> {
    this.assertOpen();
    return this.members.run((c) => saveKeyspace(c, file, exclude), this.deadlineMs);
  }

  /** Restores the records saved by saveSnapshot; records created since are deleted. */
  async restoreSnapshot(file: string, exclude: string[]): Promise<{ put: number; deleted: number }> {
    this.assertOpen();
    return this.members.run((c) => restoreKeyspace(c, file, exclude), this.deadlineMs);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Stops watches, revokes leases (etcd3's close() would leave keepalives running), then closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort(new VtlError('unavailable', 'The store is closed.'));
    await Promise.all([...this.watches].map((w) => w.close().catch(() => undefined)));
    await Promise.all([...this.leases].map((l) => l.revoke()));
    this.members.close();
  }

  private async grantLease(ttlSec: number): Promise<StoreLease> {
    this.assertOpen();
    const lease = await this.bounded('granting a lease', () =>
      StoreLease.grant(this.members, ttlSec, this.log, (l) => this.leases.delete(l)),
    );
    this.leases.add(lease);
    return lease;
  }

  /**
   * Every record under /vtl/secrets/ (or a family's prefix under it) with the id of the key that
   * sealed it (null: stored in clear, from before sealing existed), for the rotation that
   * re-seals them.
   */
  async secretSeals(
    prefix: string = SECRETS_PREFIX,
  ): Promise<{ key: string; kid: string | null; modRevision: string }[]> {
    if (!isSecretKey(prefix)) throw new VtlError('internal', `${prefix} is not under ${SECRETS_PREFIX}.`);
    const { kvs } = await this.bounded(`listing the secrets under ${prefix}`, (c) => scan(c, prefix));
    return kvs.map((kv) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(kv.value.toString());
      } catch {
        parsed = undefined;
      }
      return {
        key: kv.key.toString(),
        kid: isEnvelope(parsed) ? parsed.kid : null,
        modRevision: kv.mod_revision,
      };
    });
  }

  private async getKv(key: string): Promise<IKeyValue | undefined> {
    const res = await this.bounded(`reading ${key}`, (c) => c.get(key).exec());
    this.noteRevision(res.header.revision);
    const kv = res.kvs[0];
    return kv && this.open(kv);
  }

  /** The key-value with a sealed secret opened; every other record as stored. */
  private open(kv: IKeyValue): IKeyValue {
    const key = kv.key.toString();
    if (!isSecretKey(key)) return kv;
    return { ...kv, value: this.sealing.decode(key, kv.value) };
  }

  /** Like open(), but a secret that cannot be opened is logged and skipped, as a bad record is. */
  private openOrSkip(kv: IKeyValue): IKeyValue | undefined {
    try {
      return this.open(kv);
    } catch (err) {
      this.log.warn({ key: kv.key.toString(), err: String(err) }, 'skipping a secret that cannot be opened');
      return undefined;
    }
  }

  /**
   * Wraps a watch callback so sealed secrets arrive opened, and the event's revision counts as
   * seen: what a process learnt from a watch (an operation's result, say) is then part of
   * seenRevision, so a view it serves afterwards is never older than what it told a client.
   */
  private opening(onEvent: (e: WatchEvent) => void): (e: WatchEvent) => void {
    return (e) => {
      this.noteRevision(e.modRevision);
      onEvent(e.type === 'put' ? { ...e, value: this.sealing.decodeParsed(e.key, e.value) } : e);
    };
  }

  /** Runs a transaction; a put refused for an expired lease marks that lease lost. */
  private async txn(
    req: { compare: ICompare[]; success: IRequestOp[]; failure?: IRequestOp[] },
    ...leases: (Lease | undefined)[]
  ): Promise<ITxnResponse> {
    try {
      const first = req.success[0];
      const key = first ? Object.values(first)[0]?.key?.toString() : undefined;
      const res = await this.bounded(`writing ${key ?? 'a transaction'}`, (c) => runTxn(c, req));
      this.noteRevision(res.header.revision);
      return res;
    } catch (err) {
      if (err instanceof EtcdLeaseInvalidError) {
        for (const lease of leases)
          if (lease instanceof StoreLease || lease instanceof RenewingLease)
            lease.markLost('etcd refused a write: lease expired');
      }
      throw err;
    }
  }

  private noteRevision(revision: string): void {
    const rev = BigInt(revision);
    if (rev > this.seen) this.seen = rev;
  }

  /**
   * The store's current revision, from one small bounded read (503 unavailable past the
   * deadline): a cache that has reached it holds everything written before this call.
   */
  async currentRevision(): Promise<string> {
    const res = await this.bounded('reading the current revision', (c) =>
      c.kv.range({ key: Buffer.from(keys.settings), count_only: true }),
    );
    this.noteRevision(res.header.revision);
    return res.header.revision;
  }

  /**
   * Whether etcd answers within the deadline (or timeoutMs); /healthz asks this. Never throws.
   */
  async ping(timeoutMs = this.deadlineMs): Promise<boolean> {
    if (this.closed) return false;
    try {
      await withDeadline(timeoutMs, () =>
        this.members.run((c) => c.maintenance.status().then(() => undefined), timeoutMs),
      );
      return true;
    } catch {
      return false;
    }
  }

  /** One etcd call under the store deadline: 503 unavailable instead of a hang (deadline.ts). */
  private async bounded<R>(what: string, fn: (client: Etcd3) => Promise<R>): Promise<R> {
    let cause: unknown;
    try {
      return await withDeadline(
        this.deadlineMs,
        () => this.members.run(fn, this.deadlineMs),
        (err) => (cause = err),
      );
    } catch (err) {
      if (err instanceof VtlError && err.code === 'unavailable')
        this.log.warn({ during: coarse(what), err: String(cause ?? err.message) }, 'store call failed');
      throw err;
    }
  }

  private track<W extends Watch>(w: W): W {
    this.watches.add(w);
    const close = w.close.bind(w);
    w.close = async () => {
      this.watches.delete(w);
      await close();
    };
    return w;
  }

  private assertOpen(): void {
    if (this.closed) throw new VtlError('unavailable', 'The store is closed.');
  }
}

/** Spreads racing writers apart after a lost compare-and-swap. */
function jitter(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(50, 2 * attempt);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * TLS to an etcd named by a loopback address: grpc-js would send the IP as the TLS server name,
 * which RFC 6066 forbids (Node 20 warns with DEP0123, newer Node refuses the connection). The
 * name sent and checked is then `localhost`, which the appliance's own etcd certificate carries
 * (etcd-launcher/src/pki.ts); an etcd of one's own on a loopback address needs it in its certificate too.
 */
export function loopbackServerName(endpoints: string[]): Record<string, string> {
  const hosts = endpoints.map((e) => {
    try {
      return new URL(e).hostname.replace(/^\[|\]$/g, '');
    } catch {
      return e;
    }
  });
  return hosts.length > 0 && hosts.every((h) => h === '127.0.0.1' || h === '::1')
    ? { 'grpc.ssl_target_name_override': 'localhost' }
    : {};
}
