import { CARTRIDGE_META_FILE, MAX_PARTITIONS, cartridgeImageFiles, parseCartridgeMeta } from '@vtl/api';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { fetchChunk } from './chunk-store.js';
import { BufferRing } from './codec/buffer-ring.js';
import type { CodecPool } from './codec/codec-pool.js';
import { OffsiteError, throwIfAborted } from './errors.js';
import type { TransferProgress } from './export.js';
import { chunkName, keysOf, type GenerationRef } from './layout.js';
import { largest } from './chunk-math.js';
import { loadCheckedManifest } from './manifest-check.js';
import { describeRemote, s3For, type RemoteConnection } from './remote.js';
import type { Manifest } from './schemas.js';
import { alignedBuffers } from './tar/direct-io.js';
import { TarExtractor } from './tar/tar-extract.js';
import { timedStage } from './stage-times.js';

/** Options of importCartridge(). */
export interface ImportOptions {
  remote: RemoteConnection;
  ref: GenerationRef;
  /** A staging directory that does not exist yet or is empty; the caller swaps it in. */
  dir: string;
  codec: CodecPool;
  onProgress?: (p: TransferProgress) => void;
  signal?: AbortSignal;
  logger?: Logger;
  /** Filled in as the import runs: where its time went (the benchmark prints it). */
  stages?: ImportStages;
}

/**
 * Where an import's time went, in milliseconds. Chunks overlap, so the stages of the codec
 * threads (download, verify, decompress: summed over chunks) add up to more than the wall
 * time; `waitMs` is how long the writing side sat idle for want of an unpacked chunk, so
 * writeMs + syncMs + waitMs is about the wall time.
 */
export interface ImportStages {
  /** Request to last byte of each chunk, less the verify and decompress work done meanwhile. */
  downloadMs: number;
  /** SHA-256 of the stored bytes, on the fly. */
  verifyMs: number;
  /** zstd into the tar buffer, on the fly. */
  decompressMs: number;
  /** The codec threads' own CPU time in verifyMs and decompressMs: the rest is waiting for a core. */
  verifyCpuMs: number;
  decompressCpuMs: number;
  /** Tar extraction and writes into the staging directory (O_DIRECT for large files). */
  writeMs: number;
  /** The write-behind fdatasyncs (libuv threads), overlapped with everything else. */
  writebackMs: number;
  /** The final truncate + fsync of every file and of the directory. */
  syncMs: number;
  /** The writing side waiting for the next unpacked chunk. */
  waitMs: number;
}

/** Zeroed stage times to pass as ImportOptions.stages. */
export const noStages = (): ImportStages => ({
  downloadMs: 0,
  verifyMs: 0,
  decompressMs: 0,
  verifyCpuMs: 0,
  decompressCpuMs: 0,
  writeMs: 0,
  writebackMs: 0,
  syncMs: 0,
  waitMs: 0,
});

/**
 * Downloads a generation into `dir` (spec §4.5 rules 5–6): every chunk is checked (size,
 * SHA-256 of the object, zstd's checksum of its tar bytes) before its bytes are written, and
 * the unpacked cartridge must carry the generation's label. The stages overlap: a codec thread
 * hashes and decompresses each chunk while it downloads (at normal priority: CodecPool's
 * importNice), the next chunks download while one is written, and large files are written
 * straight from the chunk buffers to the disk with O_DIRECT (tar/direct-io.ts), so the final
 * sync has next to nothing left. Memory stays bounded: a few chunk-sized tar buffers, no
 * stored copies. The files go straight into `dir`, which the caller renames into place.
 * On any failure `dir` is left as it was (removed when this call created it) and the error
 * names the chunk: 'verify_failed', 'not_found' (no manifest), 'unreachable', 'aborted'.
 */
export async function importCartridge(opts: ImportOptions): Promise<Manifest> {
  const { remote, ref, codec } = opts;
  const what = `import of ${ref.label} ${ref.generation}`;
  throwIfAborted(opts.signal, what);
  const created = await prepareStaging(opts.dir);
  const s3 = s3For(remote);
  const extractor = new TarExtractor(
    opts.dir,
    `${keysOf(remote).generation(ref)} in ${describeRemote(remote)}`,
  );
  const stop = new AbortController();
  const onAbort = () => stop.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const inflight: Promise<Unpacked>[] = [];
  try {
    const manifest = await loadCheckedManifest(s3, remote, ref, stop.signal);
    const chunks = manifest.chunks;
    const depth = codec.threads + 1;
    // Aligned so the extractor can hand them to the disk with O_DIRECT (tar/direct-io.ts).
    const rawRing = BufferRing.of(
      await alignedBuffers(
        opts.dir,
        Math.max(1, Math.min(depth + 1, chunks.length)),
        largest(chunks, 'raw_bytes'),
      ),
    );
    const stages = opts.stages;
    let next = 0;
    const fetchNext = () => {
      const c = chunks[next++];
      if (!c) return;
      const p = (async (): Promise<Unpacked> => {
        const raw = await rawRing.acquire();
        try {
          const t0 = performance.now();
          const { zero, times } = await fetchChunk(
            s3,
            remote,
            c.key,
            raw.subarray(0, c.raw_bytes),
            { ...c, name: `${chunkName(c.n)} of ${ref.label} ${ref.generation}` },
            codec,
            stop.signal,
          );
          if (stages) {
            stages.verifyMs += times.verifyMs;
            stages.decompressMs += times.decompressMs;
            stages.verifyCpuMs += times.verifyCpuMs;
            stages.decompressCpuMs += times.decompressCpuMs;
            stages.downloadMs += performance.now() - t0 - times.verifyMs - times.decompressMs;
          }
          return { raw, zero };
        } catch (err) {
          rawRing.release(raw);
          throw err;
        }
      })();
      p.catch(() => undefined);
      inflight.push(p);
    };
    for (let i = 0; i < depth; i++) fetchNext();
    for (const c of chunks) {
      const { raw, zero } = await timedStage(stages, 'waitMs', () => inflight.shift() as Promise<Unpacked>);
      fetchNext();
      await timedStage(stages, 'writeMs', async () => {
        try {
          throwIfAborted(stop.signal, what);
          await extractor.write(Buffer.from(raw.buffer, raw.byteOffset, c.raw_bytes), zero);
        } finally {
          rawRing.release(raw);
        }
      });
      opts.onProgress?.({ bytes_done: c.raw_offset + c.raw_bytes, chunks_done: c.n + 1 });
    }
    await timedStage(stages, 'syncMs', () => extractor.finish());
    if (stages) stages.writebackMs += extractor.writebackMs;
    const parsed = parseCartridgeMeta(await readFile(join(opts.dir, CARTRIDGE_META_FILE), 'utf8'));
    const identity = parsed.ok ? parsed.meta : undefined;
    if (identity?.label !== ref.label) {
      throw new OffsiteError(
        'verify_failed',
        `${what}: the unpacked meta.json names cartridge ${identity?.label ?? '(none)'}`,
      );
    }
    opts.logger?.info(
      { label: ref.label, generation: ref.generation, tar_bytes: manifest.tar_bytes },
      'import complete',
    );
    return manifest;
  } catch (err) {
    stop.abort(err);
    await Promise.allSettled(inflight);
    await extractor.close();
    if (created) await rm(opts.dir, { recursive: true, force: true });
    else
      await Promise.all(
        cartridgeImageFiles(MAX_PARTITIONS).map((f) => rm(join(opts.dir, f), { force: true })),
      );
    if (opts.signal?.aborted) throw new OffsiteError('aborted', `${what} was aborted`, { cause: err });
    throw err;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    s3.destroy();
  }
}

/** A chunk ready to be written: its tar bytes (a ring buffer) and all-zero block map. */
interface Unpacked {
  raw: Uint8Array;
  zero: Uint8Array;
}

/** Makes sure `dir` exists and is empty; returns whether it was created here. */
async function prepareStaging(dir: string): Promise<boolean> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    await mkdir(dir, { recursive: true });
    return true;
  }
  if (entries.length > 0) {
    throw new OffsiteError(
      'invalid',
      `the staging directory ${dir} is not empty; give a fresh directory to import into`,
    );
  }
  return false;
}
