import { Range, SortOrder, SortTarget, type Etcd3, type IKeyValue } from 'etcd3';

/** How a listing walks a prefix. */
export interface ScanOptions {
  /** At most this many keys (one request); omitted = everything, fetched in pages. */
  limit?: number;
  /** Descending key order. */
  reverse?: boolean;
  /** Continue after this key (exclusive) in the listing's direction: a pagination cursor. */
  after?: string;
  keysOnly?: boolean;
  /** Read at this revision (a consistent listing of several prefixes); default the current one. */
  revision?: string;
}

/** Keys per request when listing a whole prefix; keeps responses far below gRPC message limits. */
const PAGE = 500;

/**
 * Reads every key under prefix at one revision, page by page, so large prefixes (catalog,
 * journals) neither hit message-size limits nor mix revisions.
 */
export async function scan(
  client: Etcd3,
  prefix: string,
  opts: ScanOptions = {},
): Promise<{ kvs: IKeyValue[]; revision: string }> {
  if (prefix === '') throw new Error('Refusing to scan the whole key space: give a prefix.');
  const whole = Range.prefix(prefix);
  let start = whole.start;
  let end = whole.end;
  if (opts.after !== undefined) {
    if (opts.reverse) end = Buffer.from(opts.after);
    else start = Buffer.concat([Buffer.from(opts.after), Buffer.from([0])]);
  }
  const kvs: IKeyValue[] = [];
  let revision: string | undefined = opts.revision;
  while (true) {
    const want = opts.limit !== undefined ? Math.min(PAGE, opts.limit - kvs.length) : PAGE;
    if (want <= 0 || Buffer.compare(start, end) >= 0) break;
    const res = await client.kv.range({
      key: start,
      range_end: end,
      limit: want,
      ...(revision ? { revision } : {}),
      ...(opts.reverse ? { sort_order: SortOrder.Descend, sort_target: SortTarget.Key } : {}),
      ...(opts.keysOnly ? { keys_only: true } : {}),
    });
    revision ??= res.header.revision;
    kvs.push(...res.kvs);
    const last = res.kvs.at(-1);
    if (!res.more || !last) break;
    if (opts.reverse) end = last.key;
    else start = Buffer.concat([last.key, Buffer.from([0])]);
  }
  if (revision === undefined) {
    // Nothing to read (empty window): still report the current revision for a following watch.
    const res = await client.kv.range({ key: whole.start, range_end: whole.end, count_only: true });
    revision = res.header.revision;
  }
  return { kvs, revision };
}
