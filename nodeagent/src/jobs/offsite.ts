import {
  CodecPool,
  DEFAULT_CHUNK_BYTES,
  OffsiteError,
  exportCartridge,
  importCartridge,
  verifyGeneration,
  writeSystemFile,
  writeTopology,
  type RemoteConnection,
} from '@vtl/offsite';

export { DEFAULT_CHUNK_BYTES };
export type { RemoteConnection };
export type { LedgerEntry } from '@vtl/offsite';
export type Codec = CodecPool;

/** The @vtl/offsite functions the job steps call, in one object so steps can be given another. */
export const offsiteEngine = () => ({
  CodecPool,
  exportCartridge,
  importCartridge,
  verifyGeneration,
  writeTopology,
  writeSystemFile,
});
export type OffsiteEngine = ReturnType<typeof offsiteEngine>;

/** The stable code of an offsite engine error (OffsiteError), if it is one. */
export function offsiteCode(err: unknown): string | undefined {
  return err instanceof OffsiteError ? err.code : undefined;
}
