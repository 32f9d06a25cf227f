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

/**
 * Builds the raw etcd comparison for "no key under prefix was created or changed after
 * revision" (true when none is there). Deletions are not seen.
 */
export function prefixNotWrittenAfter(prefix: string, revision: string): ICompare {
  return rangeNotWrittenAfter(Buffer.from(prefix), Range.prefix(prefix).end, revision);
}

function rangeNotWrittenAfter(key: Buffer, rangeEnd: Buffer, revision: string): ICompare {
  return {
    key,
    range_end: rangeEnd,
    target: 'Mod',
    result: 'Less',
    mod_revision: String(BigInt(revision) + 1n),
  };
}

/**
 * For a transaction without comparisons of its own: "every key it writes or deletes was last
 * written at or before revision". An attempt that did not answer in time may still be applied
 * later (a frozen member applies what it read before it froze once it thaws); with these it
 * then fails instead of putting old values back over, or deleting, newer writes.
 */
export function notWrittenAfterOps(ops: readonly IRequestOp[], revision: string): ICompare[] {
  return ops.flatMap((op): ICompare[] => {
    const put = op.request_put;
    if (put?.key) return [notWrittenAfter(put.key.toString(), revision)];
    const del = op.request_delete_range;
    if (!del?.key) return [];
    const key = Buffer.from(del.key);
    return del.range_end
      ? [rangeNotWrittenAfter(key, Buffer.from(del.range_end), revision)]
      : [notWrittenAfter(key.toString(), revision)];
  });
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
    this.compare.push(prefixNotWrittenAfter(prefix, revision));
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
