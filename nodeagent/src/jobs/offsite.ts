// Light modules only at start: the package index brings the S3 client, zstd and the codec
// workers (some 45 MB of a process's private memory), which only an offsite job needs.
import type { CodecPool, RemoteConnection } from '@vtl/offsite';
import { DEFAULT_CHUNK_BYTES } from '@vtl/offsite/chunk-math';
import { OffsiteError } from '@vtl/offsite/errors';

export { DEFAULT_CHUNK_BYTES };
export type { RemoteConnection };
export type { LedgerEntry } from '@vtl/offsite';
export type Codec = CodecPool;

/**
 * The @vtl/offsite functions the job steps call, in one object so steps can be given another;
 * loaded on the first job, so a nodeagent that never copies a cartridge offsite never loads them.
 */
export async function offsiteEngine() {
  const m = await import('@vtl/offsite');
  return {
    CodecPool: m.CodecPool,
    exportCartridge: m.exportCartridge,
    importCartridge: m.importCartridge,
    verifyGeneration: m.verifyGeneration,
    writeTopology: m.writeTopology,
    writeSystemFile: m.writeSystemFile,
  };
}
export type OffsiteEngine = Awaited<ReturnType<typeof offsiteEngine>>;

/** The stable code of an offsite engine error (OffsiteError), if it is one. */
export function offsiteCode(err: unknown): string | undefined {
  return err instanceof OffsiteError ? err.code : undefined;
}
