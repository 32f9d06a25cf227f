import { createHash } from 'node:crypto';
import binding from 'zstd-napi/binding.js';
import type { DownloadSink } from './http-download.js';
import { ZERO_BLOCK, type StageTimes } from './messages.js';

/** Decompression contexts of this thread, reused: several downloads may stream at once. */
const idle: binding.DCtx[] = [];
const ZEROES = Buffer.alloc(ZERO_BLOCK);

/**
 * CPU milliseconds this thread has used (Node 23.9+: getrusage of the thread), 0 where not
 * available. Beside wall time it tells a slow stage from one waiting for a core.
 */
const threadCpuMs: () => number = (() => {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  if (typeof usage !== 'function') return () => 0;
  return () => {
    const u = usage.call(process);
    return (u.user + u.system) / 1000;
  };
})();

/** What a chunk must hash and decompress to. */
export interface StreamExpectation {
  stored_bytes: number;
  raw_bytes: number;
  sha256: string;
  name: string;
}

/**
 * A download sink that checks and unpacks a stored chunk while its bytes arrive, instead of
 * after the whole object is in memory: each piece from the socket goes into SHA-256 and
 * straight through zstd into `raw`, and the all-zero map grows with the output. `finish()`
 * then only compares the hash and checks the frame ended (zstd checks its content checksum
 * at the end of the frame) at exactly `raw_bytes`. A failed or retried download starts a
 * new sink; nothing written to `raw` counts until finish() says so.
 */
export class StreamUnpack implements DownloadSink {
  readonly length: number;
  readonly times: StageTimes = { verifyMs: 0, decompressMs: 0, verifyCpuMs: 0, decompressCpuMs: 0 };
  readonly zero: Uint8Array;
  private readonly hash = createHash('sha256');
  private readonly dctx: binding.DCtx;
  private produced = 0;
  private mapped = 0;
  private frameDone = false;

  constructor(
    private readonly raw: Uint8Array,
    private readonly expect: StreamExpectation,
  ) {
    this.length = expect.stored_bytes;
    this.zero = new Uint8Array(Math.ceil(expect.raw_bytes / ZERO_BLOCK));
    this.dctx = idle.pop() ?? new binding.DCtx();
    this.dctx.reset(binding.ResetDirective.sessionOnly);
  }

  put(piece: Buffer): string | undefined {
    let t0 = performance.now();
    let c0 = threadCpuMs();
    this.hash.update(piece);
    const t1 = performance.now();
    const c1 = threadCpuMs();
    this.times.verifyMs += t1 - t0;
    this.times.verifyCpuMs += c1 - c0;
    t0 = t1;
    c0 = c1;
    try {
      let src: Uint8Array = piece;
      while (src.length > 0) {
        if (this.frameDone) return `${this.expect.name}: has bytes after its zstd frame`;
        const [left, out, used] = this.dctx.decompressStream(this.raw.subarray(this.produced), src);
        this.produced += out;
        src = src.subarray(used);
        this.frameDone = left === 0;
        // No progress with input left: the output is full, so the frame holds more than raw_bytes.
        if (out === 0 && used === 0) return this.tooLong();
      }
    } catch (err) {
      return `${this.expect.name}: does not decompress to its ${this.expect.raw_bytes} tar bytes (${(err as Error).message})`;
    } finally {
      this.times.decompressMs += performance.now() - t0;
      this.times.decompressCpuMs += threadCpuMs() - c0;
    }
    this.mapZeros(false);
    return undefined;
  }

  /** After the whole object arrived: undefined when every check passed, else why not. */
  finish(): string | undefined {
    const t0 = performance.now();
    const c0 = threadCpuMs();
    const got = this.hash.digest('hex');
    this.times.verifyMs += performance.now() - t0;
    this.times.verifyCpuMs += threadCpuMs() - c0;
    this.release();
    if (got !== this.expect.sha256) {
      return `${this.expect.name}: SHA-256 ${got} of ${this.expect.stored_bytes} bytes does not match the recorded ${this.expect.sha256}`;
    }
    if (!this.frameDone || this.produced !== this.expect.raw_bytes) {
      return `${this.expect.name}: decompresses to ${this.produced} bytes${this.frameDone ? '' : ' and an unfinished frame'}, the manifest says ${this.expect.raw_bytes}`;
    }
    this.mapZeros(true);
    return undefined;
  }

  /** Gives the context back (after finish, or when the download failed). */
  release(): void {
    if (!idle.includes(this.dctx)) idle.push(this.dctx);
  }

  private tooLong(): string {
    return `${this.expect.name}: decompresses to more than the manifest's ${this.expect.raw_bytes} bytes`;
  }

  /** Marks the all-zero blocks of the output so far (the last, short one only at the end). */
  private mapZeros(all: boolean): void {
    const view = Buffer.from(this.raw.buffer, this.raw.byteOffset, this.produced);
    const upTo = all ? this.zero.length : Math.floor(this.produced / ZERO_BLOCK);
    for (; this.mapped < upTo; this.mapped++) {
      const part = view.subarray(this.mapped * ZERO_BLOCK, (this.mapped + 1) * ZERO_BLOCK);
      if (part.equals(part.length === ZERO_BLOCK ? ZEROES : ZEROES.subarray(0, part.length))) {
        this.zero[this.mapped] = 1;
      }
    }
  }
}
