import type { Logger } from 'pino';
import { getChunk } from './chunk-store.js';
import { BufferRing } from './codec/buffer-ring.js';
import type { CodecPool } from './codec/codec-pool.js';
import { OffsiteError, throwIfAborted } from './errors.js';
import { chunkName, keysOf, type GenerationRef } from './layout.js';
import { largest } from './chunk-math.js';
import { loadCheckedManifest } from './manifest-check.js';
import { describeRemote, s3For, type RemoteConnection } from './remote.js';
import type { Manifest } from './schemas.js';

/** Options of verifyGeneration(). */
export interface VerifyOptions {
  remote: RemoteConnection;
  ref: GenerationRef;
  codec: CodecPool;
  signal?: AbortSignal;
  logger?: Logger;
}

/**
 * Re-reads every chunk of a generation (evict, spec §4.5 rule 4): the manifest must agree with
 * itself and the folder, and each downloaded chunk must have its recorded size and SHA-256 and
 * decompress to tar bytes with the recorded SHA-256. 'verify_failed' names the first chunk
 * that does not; 'not_found' when the generation has no manifest.
 */
export async function verifyGeneration(opts: VerifyOptions): Promise<Manifest> {
  const { remote, ref, codec } = opts;
  const s3 = s3For(remote);
  const what = `verification of ${keysOf(remote).generation(ref)}`;
  try {
    throwIfAborted(opts.signal, what);
    const manifest = await loadCheckedManifest(s3, remote, ref, opts.signal);
    const ring = new BufferRing(codec.threads + 1, largest(manifest.chunks, 'stored_bytes'));
    let next = 0;
    let failure: unknown;
    const worker = async () => {
      while (next < manifest.chunks.length && failure === undefined) {
        const c = manifest.chunks[next++];
        if (!c) break;
        try {
          throwIfAborted(opts.signal, what);
          const buf = await ring.acquire();
          try {
            const stored = buf.subarray(0, c.stored_bytes);
            await getChunk(s3, remote, c.key, stored, codec, opts.signal);
            await codec.check(stored, { ...c, name: `${chunkName(c.n)} of ${ref.label} ${ref.generation}` });
          } finally {
            ring.release(buf);
          }
        } catch (err) {
          failure ??= err;
        }
      }
    };
    await Promise.all(Array.from({ length: codec.threads + 1 }, worker));
    if (failure !== undefined) {
      if (opts.signal?.aborted) throw new OffsiteError('aborted', `${what} was aborted`, { cause: failure });
      throw failure;
    }
    opts.logger?.info(
      {
        label: ref.label,
        generation: ref.generation,
        chunks: manifest.chunks.length,
        where: describeRemote(remote),
      },
      'generation verified',
    );
    return manifest;
  } finally {
    s3.destroy();
  }
}
