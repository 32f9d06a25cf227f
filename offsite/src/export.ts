import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CARTRIDGE_META_FILE, isoNow, parseCartridgeMeta, type CartridgeMeta } from '@vtl/api';
import type { Logger } from 'pino';
import {
  DEFAULT_CHUNK_BYTES,
  MAX_CHUNK_BYTES,
  MIN_CHUNK_BYTES,
  chunkCount,
  chunksSha256,
  rawBytesOf,
} from './chunk-math.js';
import { confirmChunk, putChunk } from './chunk-store.js';
import { BufferRing } from './codec/buffer-ring.js';
import type { CodecPool } from './codec/codec-pool.js';
import { compressBound } from './codec/messages.js';
import { OffsiteError, throwIfAborted } from './errors.js';
import { keysOf, type GenerationRef } from './layout.js';
import { checkLedger } from './ledger.js';
import { putJson } from './objects.js';
import { wormObjectLock } from './object-lock.js';
import { describeRemote, s3For, type RemoteConnection } from './remote.js';
import { MANIFEST_FORMAT, type LedgerEntry, type Manifest } from './schemas.js';
import { TarSource } from './tar/tar-source.js';
import { timedStage } from './stage-times.js';

/** Progress of a transfer: raw tar bytes and chunks done so far (including resumed ones). */
export interface TransferProgress {
  bytes_done: number;
  chunks_done: number;
}

/** Options of exportCartridge(). */
export interface ExportOptions {
  remote: RemoteConnection;
  ref: GenerationRef;
  /** The cartridge directory (emulator media layout). */
  dir: string;
  /** Chunks verified by an earlier attempt of this generation: not uploaded again. */
  ledger: LedgerEntry[];
  /** Called in chunk order after each chunk verified remote-side; persist the entry here. */
  onChunk: (entry: LedgerEntry, progress: TransferProgress) => Promise<void>;
  codec: CodecPool;
  /** Tar bytes per chunk; default 64 MiB. A resumed export must use the first attempt's size. */
  chunkBytes?: number;
  signal?: AbortSignal;
  logger?: Logger;
  /** Where the time goes, added to as the export runs (the benchmark prints it). */
  stages?: ExportStages;
}

/**
 * Where export time goes, in ms summed over chunks. The export loop's own stages (read, the two
 * waits) add up to about its wall time; a chunk's compress, upload and confirm overlap other
 * chunks' and add up to more.
 */
export interface ExportStages {
  /** Reading each chunk's tar bytes from the cartridge. */
  readMs: number;
  /** The loop waiting for a free raw or compressed buffer (every one held by a chunk in flight). */
  bufferWaitMs: number;
  /** The loop waiting for the oldest chunk in flight to be verified (as many in flight as allowed). */
  settleWaitMs: number;
  /** From handing a chunk to the codec threads until its compressed bytes and SHA-256 are back. */
  compressMs: number;
  /** PUT of each chunk. */
  uploadMs: number;
  /** HEAD of each chunk after its PUT. */
  confirmMs: number;
}

/** Zeroed stage times to pass as ExportOptions.stages. */
export const noExportStages = (): ExportStages => ({
  readMs: 0,
  bufferWaitMs: 0,
  settleWaitMs: 0,
  compressMs: 0,
  uploadMs: 0,
  confirmMs: 0,
});

/** A chunk on its way: compressed, then uploaded and confirmed. */
type Pending = Promise<LedgerEntry>;

/**
 * Exports one cartridge as a generation (spec §4.5 rule 3): a deterministic tar split into
 * chunks, zstd-compressed on the codec threads, uploaded and confirmed one by one with the
 * ledger callback after each, the manifest last. A few chunks are in flight at a time, so
 * memory stays bounded whatever the cartridge size.
 */
export async function exportCartridge(opts: ExportOptions): Promise<Manifest> {
  const { remote, ref, codec } = opts;
  const chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  if (!Number.isInteger(chunkBytes) || chunkBytes < MIN_CHUNK_BYTES || chunkBytes > MAX_CHUNK_BYTES) {
    throw new OffsiteError(
      'invalid',
      `chunkBytes ${chunkBytes} is outside ${MIN_CHUNK_BYTES}..${MAX_CHUNK_BYTES}`,
    );
  }
  throwIfAborted(opts.signal, `export of ${ref.label}`);
  const identity = await readIdentity(opts.dir);
  if (identity.stub) {
    throw new OffsiteError(
      'stub',
      `${ref.label} is an evicted stub with no data to export; import a generation first`,
    );
  }
  if (identity.label !== ref.label) {
    throw new OffsiteError('invalid', `${opts.dir} holds cartridge ${identity.label}, not ${ref.label}`);
  }
  const keys = keysOf(remote);
  const source = await TarSource.open(opts.dir);
  const s3 = s3For(remote);
  const stop = new AbortController();
  const onAbort = () => stop.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const log = opts.logger?.child({ label: ref.label, generation: ref.generation });
  try {
    const count = chunkCount(source.size, chunkBytes);
    const resumed = await checkLedger({
      s3,
      remote,
      ref,
      ledger: opts.ledger,
      chunkBytes,
      tarBytes: source.size,
      signal: stop.signal,
    });
    // A WORM cartridge's copy is write-once too, where the bucket can hold it so.
    const lock = identity.worm ? await wormObjectLock(s3, remote, stop.signal) : undefined;
    log?.info(
      { tar_bytes: source.size, chunks: count, resumed: resumed.length, object_lock: lock?.mode ?? null },
      'export starting',
    );
    if (identity.worm && !lock) {
      log?.warn(
        { where: describeRemote(remote) },
        'a WORM cartridge is exported to a bucket without S3 Object Lock: its copy can be deleted or overwritten; create the bucket with Object Lock enabled to keep it write-once',
      );
    }

    const done: LedgerEntry[] = [...resumed];
    // Raw chunks wait for a codec thread; stored ones for their upload.
    const biggest = Math.min(chunkBytes, source.size);
    const rawRing = new BufferRing(codec.threads + 1, biggest);
    const storedRing = new BufferRing(codec.threads + 2, compressBound(biggest));
    const inflight: Pending[] = [];
    const maxInflight = codec.threads + 2;

    const { stages } = opts;
    const settleOldest = async () => {
      const entry = await timedStage(stages, 'settleWaitMs', () => inflight.shift() as Pending);
      done.push(entry);
      await opts.onChunk(entry, { bytes_done: entry.raw_offset + entry.raw_bytes, chunks_done: entry.n + 1 });
      log?.debug({ chunk: entry.n, stored_bytes: entry.stored_bytes }, 'chunk verified');
    };

    // Resolves once the chunk is read and handed to a codec thread; `pending` then finishes it.
    const startChunk = async (n: number): Promise<{ pending: Pending }> => {
      const raw_offset = n * chunkBytes;
      const raw_bytes = rawBytesOf(n, source.size, chunkBytes);
      const [out, raw] = await timedStage(stages, 'bufferWaitMs', async () => [
        await storedRing.acquire(),
        await rawRing.acquire(),
      ]);
      let compressed;
      try {
        const view = raw.subarray(0, raw_bytes);
        await timedStage(stages, 'readMs', () => source.read(view, raw_offset));
        throwIfAborted(stop.signal, `export of ${ref.label}`);
        compressed = timedStage(stages, 'compressMs', () => codec.compress(view, out));
      } catch (err) {
        rawRing.release(raw);
        storedRing.release(out);
        throw err;
      }
      const pending = (async () => {
        try {
          const c = await compressed.finally(() => rawRing.release(raw));
          const key = keys.chunk(ref, n);
          const stored = Buffer.from(out.buffer, out.byteOffset, c.stored_bytes);
          await timedStage(stages, 'uploadMs', () =>
            putChunk(s3, remote, key, stored, c.sha256, stop.signal, lock),
          );
          await timedStage(stages, 'confirmMs', () =>
            confirmChunk(s3, remote, key, c.stored_bytes, c.sha256, stop.signal),
          );
          return { n, key, raw_offset, raw_bytes, stored_bytes: c.stored_bytes, sha256: c.sha256 };
        } finally {
          storedRing.release(out);
        }
      })();
      return { pending };
    };

    try {
      for (let n = resumed.length; n < count; n++) {
        const { pending } = await startChunk(n);
        pending.catch(() => undefined);
        inflight.push(pending);
        if (inflight.length >= maxInflight) await settleOldest();
      }
      while (inflight.length > 0) await settleOldest();
    } catch (err) {
      // Stop the chunks still on their way before giving their buffers up.
      stop.abort(err);
      await Promise.allSettled(inflight);
      throw opts.signal?.aborted
        ? new OffsiteError('aborted', `export of ${ref.label} was aborted`, { cause: err })
        : err;
    }

    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      system: ref.system,
      library_serial: ref.library_serial,
      label: ref.label,
      generation: ref.generation,
      created_at: isoNow(),
      // Every partition's data file counts (data, data.p1, ...).
      logical_bytes: Object.entries(source.fileSizes)
        .filter(([name]) => name === 'data' || name.startsWith('data.'))
        .reduce((sum, [, size]) => sum + size, 0),
      tar_bytes: source.size,
      chunks_sha256: chunksSha256(done.map((c) => c.sha256)),
      stored_bytes: done.reduce((sum, c) => sum + c.stored_bytes, 0),
      chunk_bytes: chunkBytes,
      compression: 'zstd',
      chunks: done,
      cartridge: {
        generation: identity.generation,
        density: identity.density,
        capacity_bytes: identity.capacity_bytes,
        write_protected: identity.write_protected,
      },
    };
    throwIfAborted(stop.signal, `export of ${ref.label}`);
    await putJson(s3, remote, keys.manifest(ref), manifest, stop.signal, lock);
    log?.info({ stored_bytes: manifest.stored_bytes, where: describeRemote(remote) }, 'export complete');
    return manifest;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    s3.destroy();
    await source.close();
  }
}

/** The meta.json of a cartridge directory (api cartridge-image.ts); 'invalid' when missing or unreadable. */
async function readIdentity(dir: string): Promise<CartridgeMeta> {
  const file = join(dir, CARTRIDGE_META_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new OffsiteError(
      'invalid',
      `no cartridge image at ${dir} (${CARTRIDGE_META_FILE}: ${(err as Error).message})`,
    );
  }
  const parsed = parseCartridgeMeta(text);
  if (!parsed.ok) throw new OffsiteError('invalid', `${file} is not a cartridge meta.json`);
  return parsed.meta;
}
