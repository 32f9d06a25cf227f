import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import readline from 'node:readline';
import type { Etcd3 } from 'etcd3';
import { ROOT } from '@vtl/api';
import { scan } from './range.js';

/** Operations per restore transaction: below etcd's default --max-txn-ops (128). */
const OPS_PER_TXN = 100;

/** Keys a snapshot neither holds nor restores: leased records belong to live processes. */
const isKept = (key: string, lease: string, exclude: string[]) =>
  lease === '0' && !exclude.some((p) => key.startsWith(p));

/**
 * Writes every record of the appliance (the /vtl/ key space at one revision) to `file`, one JSON
 * line per key with base64 key and value: sealed secrets stay sealed, byte for byte. Leased
 * records (node status, elections, locks) and `exclude` prefixes are left out. Returns the count.
 */
export async function saveKeyspace(client: Etcd3, file: string, exclude: string[]): Promise<number> {
  const { kvs, revision } = await scan(client, ROOT);
  const out = createWriteStream(file, { mode: 0o600 });
  let count = 0;
  out.write(`${JSON.stringify({ format: 1, revision })}\n`);
  for (const kv of kvs) {
    if (!isKept(kv.key.toString(), String(kv.lease), exclude)) continue;
    count++;
    if (!out.write(`${JSON.stringify({ k: kv.key.toString('base64'), v: kv.value.toString('base64') })}\n`))
      await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return count;
}

/**
 * Makes the /vtl/ key space equal to a snapshot written by saveKeyspace, except leased records and
 * `exclude` prefixes: records created since are deleted, changed ones rewritten. Batched in
 * transactions of OPS_PER_TXN operations (etcd bounds one transaction), so a reader may see the
 * key space half restored; callers restart the control plane afterwards.
 */
export async function restoreKeyspace(
  client: Etcd3,
  file: string,
  exclude: string[],
): Promise<{ put: number; deleted: number }> {
  const wanted = new Map<string, Buffer>();
  const lines = readline.createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let header = true;
  for await (const line of lines) {
    if (header) {
      if ((JSON.parse(line) as { format?: number }).format !== 1)
        throw new Error(`${file} is not a store snapshot of this format`);
      header = false;
      continue;
    }
    if (!line) continue;
    const { k, v } = JSON.parse(line) as { k: string; v: string };
    wanted.set(Buffer.from(k, 'base64').toString(), Buffer.from(v, 'base64'));
  }
  if (header) throw new Error(`${file} is empty: not a store snapshot`);
  const { kvs } = await scan(client, ROOT);
  const ops: Array<{ key: string; value?: Buffer }> = [];
  const present = new Set<string>();
  for (const kv of kvs) {
    const key = kv.key.toString();
    if (!isKept(key, String(kv.lease), exclude)) continue;
    present.add(key);
    const want = wanted.get(key);
    if (!want) ops.push({ key });
    else if (!want.equals(kv.value)) ops.push({ key, value: want });
  }
  for (const [key, value] of wanted)
    if (!present.has(key) && isKept(key, '0', exclude)) ops.push({ key, value });
  for (let i = 0; i < ops.length; i += OPS_PER_TXN) {
    const batch = ops.slice(i, i + OPS_PER_TXN);
    await client.kv.txn({
      compare: [],
      success: batch.map((op) =>
        op.value
          ? { request_put: { key: Buffer.from(op.key), value: op.value } }
          : { request_delete_range: { key: Buffer.from(op.key) } },
      ),
      failure: [],
    });
  }
  const deleted = ops.filter((o) => !o.value).length;
  return { put: ops.length - deleted, deleted };
}
