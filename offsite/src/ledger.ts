import type { S3Client } from '@aws-sdk/client-s3';
import { rawBytesOf } from './chunk-math.js';
import { headChunk } from './chunk-store.js';
import { OffsiteError } from './errors.js';
import { keysOf, type GenerationRef } from './layout.js';
import type { RemoteConnection } from './remote.js';
import type { LedgerEntry } from './schemas.js';

/** HEAD requests at once when re-checking a ledger. */
const CHECK_CONCURRENCY = 8;

/**
 * The chunks of an earlier attempt that can be kept: the longest prefix of the ledger whose
 * objects are still in the bucket with the recorded size and hash. Raises 'invalid' when the
 * ledger cannot belong to this tar stream (another chunk size, or the cartridge changed size).
 */
export async function checkLedger(opts: {
  s3: S3Client;
  remote: RemoteConnection;
  ref: GenerationRef;
  ledger: readonly LedgerEntry[];
  chunkBytes: number;
  tarBytes: number;
  signal?: AbortSignal;
}): Promise<LedgerEntry[]> {
  const { ref, chunkBytes, tarBytes } = opts;
  const keys = keysOf(opts.remote);
  const sorted = [...opts.ledger].sort((a, b) => a.n - b.n);
  const fits: LedgerEntry[] = [];
  for (const [i, e] of sorted.entries()) {
    if (e.n !== i) break;
    const expected = {
      raw_offset: i * chunkBytes,
      raw_bytes: rawBytesOf(i, tarBytes, chunkBytes),
      key: keys.chunk(ref, i),
    };
    if (
      e.raw_offset !== expected.raw_offset ||
      e.raw_bytes !== expected.raw_bytes ||
      e.key !== expected.key
    ) {
      throw new OffsiteError(
        'invalid',
        `the ledger of ${ref.label} ${ref.generation} does not fit this cartridge (chunk ${i}: ${e.raw_bytes} bytes at ${e.raw_offset}, expected ${expected.raw_bytes} at ${expected.raw_offset}); the cartridge changed or another chunk size was used: export into a new generation`,
      );
    }
    fits.push(e);
  }
  const checked: (LedgerEntry | undefined)[] = new Array(fits.length);
  let next = 0;
  const worker = async () => {
    while (next < fits.length) {
      const e = fits[next++] as LedgerEntry;
      const got = await headChunk(opts.s3, opts.remote, e.key, opts.signal);
      checked[e.n] = got && got.size === e.stored_bytes && got.sha256 === e.sha256 ? e : undefined;
    }
  };
  await Promise.all(Array.from({ length: CHECK_CONCURRENCY }, worker));
  const keep: LedgerEntry[] = [];
  for (const c of checked) {
    if (!c) break;
    keep.push(c);
  }
  return keep;
}
