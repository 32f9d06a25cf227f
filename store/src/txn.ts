import { VtlError } from '@vtl/api';
import { Range, type Etcd3, type ICompare, type IRequestOp, type ITxnResponse } from 'etcd3';
import { encode } from './codec.js';
import type { Lease } from './lease.js';
import { RecordSealing } from '@vtl/sealing';

/** Without a sealer a put of a secret is refused rather than stored in clear. */
const NO_SEALING = new RecordSealing(undefined);

/** An all-or-nothing etcd transaction: every comparison must hold or nothing is written. */
export interface Txn {
  /** Compares the key's create revision with 0: the key must not exist. */
  ifAbsent(key: string): Txn;
  ifModRevision(key: string, modRevision: string): Txn;
  /**
   * No key under prefix was created or changed after revision (a listing's revision): what a
   * decision read from a whole prefix still holds. Deletions are not seen.
   */
  ifUnchangedSince(prefix: string, revision: string): Txn;
  put(key: string, value: unknown, opts?: { lease?: Lease }): Txn;
  delete(key: string): Txn;
  /** Deletes every key in [fromKey, toKey). */
  deleteRange(fromKey: string, toKey: string): Txn;
  /** false when a comparison failed; nothing was written then. */
  commit(): Promise<boolean>;
}

/** etcd's default --max-txn-ops: a larger transaction is refused by the server. */
export const MAX_TXN_OPS = 128;

/** Builds the raw etcd comparison for "key is absent". */
export function absent(key: string): ICompare {
  return { key: Buffer.from(key), target: 'Create', result: 'Equal', create_revision: 0 };
}

/** Builds the raw etcd comparison for "key is still at modRevision". */
export function atModRevision(key: string, modRevision: string): ICompare {
  return { key: Buffer.from(key), target: 'Mod', result: 'Equal', mod_revision: modRevision };
}

/** Builds the raw etcd comparison for "key was last written at or before revision (or is absent)". */
export function notWrittenAfter(key: string, revision: string): ICompare {
  return {
    key: Buffer.from(key),
    target: 'Mod',
    result: 'Less',
    mod_revision: String(BigInt(revision) + 1n),
  };
}

/** Builds a raw put operation; records under the secrets prefix are sealed. */
export function putOp(key: string, value: unknown, lease?: Lease, sealing = NO_SEALING): IRequestOp {
  return {
    request_put: {
      key: Buffer.from(key),
      value: Buffer.from(sealing.encode(key, encode(value))),
      ...(lease ? { lease: lease.id } : {}),
    },
  };
}

/** Builds a raw get operation, used on the failure branch so a retry needs no extra read. */
export function getOp(key: string): IRequestOp {
  return { request_range: { key: Buffer.from(key) } };
}

/** The Txn builder behind Store.transaction(); methods mutate and return this. */
export class StoreTxn implements Txn {
  private readonly compare: ICompare[] = [];
  private readonly success: IRequestOp[] = [];
  private readonly leases: Lease[] = [];
  private committed = false;

  constructor(
    private readonly run: (
      req: { compare: ICompare[]; success: IRequestOp[] },
      leases: Lease[],
    ) => Promise<ITxnResponse>,
    private readonly sealing: RecordSealing,
  ) {}

  ifAbsent(key: string): Txn {
    this.compare.push(absent(key));
    return this;
  }

  ifModRevision(key: string, modRevision: string): Txn {
    this.compare.push(atModRevision(key, modRevision));
    return this;
  }

  ifUnchangedSince(prefix: string, revision: string): Txn {
    this.compare.push({
      key: Buffer.from(prefix),
      range_end: Range.prefix(prefix).end,
      target: 'Mod',
      result: 'Less',
      mod_revision: (BigInt(revision) + 1n).toString(),
    });
    return this;
  }

  put(key: string, value: unknown, opts?: { lease?: Lease }): Txn {
    this.success.push(putOp(key, value, opts?.lease, this.sealing));
    if (opts?.lease) this.leases.push(opts.lease);
    return this;
  }

  delete(key: string): Txn {
    this.success.push({ request_delete_range: { key: Buffer.from(key) } });
    return this;
  }

  deleteRange(fromKey: string, toKey: string): Txn {
    this.success.push({ request_delete_range: { key: Buffer.from(fromKey), range_end: Buffer.from(toKey) } });
    return this;
  }

  async commit(): Promise<boolean> {
    if (this.committed) throw new Error('This transaction was committed already; start a new one.');
    this.committed = true;
    const size = Math.max(this.compare.length, this.success.length);
    if (size > MAX_TXN_OPS) {
      throw new VtlError(
        'internal',
        `A transaction holds ${size} operations; etcd accepts at most ${MAX_TXN_OPS} (--max-txn-ops). Split it.`,
      );
    }
    const res = await this.run({ compare: this.compare, success: this.success }, this.leases);
    return res.succeeded;
  }
}

/** Sends a raw transaction through the client. */
export function runTxn(
  client: Etcd3,
  req: { compare: ICompare[]; success: IRequestOp[]; failure?: IRequestOp[] },
): Promise<ITxnResponse> {
  return client.kv.txn({ compare: req.compare, success: req.success, failure: req.failure ?? [] });
}
