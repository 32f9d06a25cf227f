import type { DownloadResult } from './http-download.js';

/**
 * Messages between CodecPool and its worker threads (codec-worker.ts). Every Uint8Array is a
 * view of shared memory: the thread reads and writes it in place.
 */
export type CodecRequest =
  | { id: number; op: 'compress'; raw: Uint8Array; out: Uint8Array; level: number }
  | {
      id: number;
      op: 'unpack';
      stored: Uint8Array;
      /** Where the tar bytes go (exactly raw_bytes long); absent: only check them. */
      raw: Uint8Array | undefined;
      sha256: string;
      raw_bytes: number;
      name: string;
    }
  | {
      id: number;
      op: 'download';
      url: string;
      headers: Record<string, string>;
      into: Uint8Array;
      idleTimeoutMs: number;
    }
  | {
      id: number;
      /** A download checked and unpacked while it arrives (stream-unpack.ts): no stored copy. */
      op: 'fetch';
      url: string;
      headers: Record<string, string>;
      /** Where the tar bytes go (exactly raw_bytes long). */
      raw: Uint8Array;
      stored_bytes: number;
      raw_bytes: number;
      sha256: string;
      name: string;
      idleTimeoutMs: number;
    }
  | { id: number; op: 'cancel'; target: number };

/**
 * Milliseconds a codec thread spent on one chunk's checks and decompression: wall time, and
 * the thread's own CPU time in it (the difference is the thread waiting for a core).
 */
export interface StageTimes {
  verifyMs: number;
  decompressMs: number;
  verifyCpuMs: number;
  decompressCpuMs: number;
}

export type CodecReply =
  | { id: number; ok: true; stored_bytes?: number; sha256?: string; zero?: Uint8Array }
  | { id: number; ok: false; code?: string; message: string }
  | { id: number; ok: 'download'; result: DownloadResult; zero?: Uint8Array; times?: StageTimes };

/** Granularity of the all-zero map `unpack` returns: runs this long are left as holes. */
export const ZERO_BLOCK = 64 * 1024;

/** ZSTD_COMPRESSBOUND: the most a zstd frame of `size` input bytes can take. */
export function compressBound(size: number): number {
  const small = 128 * 1024;
  return size + (size >>> 8) + (size < small ? (small - size) >>> 11 : 0);
}
