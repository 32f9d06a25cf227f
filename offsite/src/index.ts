/**
 * Offsite copies: S3 remotes, the bucket layout of spec §2.17, manifests and catalog scans,
 * and moving cartridge images to and from buckets.
 *
 * - Remotes: s3For, probeRemote, listObjects, deleteFolder.
 * - Layout and records: GENERATION, newGeneration, generationFolder, chunkName; the Manifest,
 *   Topology and SystemFile schemas; readManifest, readTopology, writeTopology,
 *   readSystemFile, writeSystemFile; scanBucket (catalog rebuild).
 * - Transfers: exportCartridge (resumable through its ledger), verifyGeneration,
 *   importCartridge, all doing zstd and SHA-256 on a shared CodecPool of worker threads. Each
 *   transfer holds about (2 × threads + 3) chunk buffers in shared memory (64 MiB chunks:
 *   ~450 MiB on two cores) and allocates nothing large after that. Downloads run on the codec
 *   threads too (requests signed by the SDK, sent by node:http there), so chunk bytes never
 *   pass through the event loop on import or verify.
 * - Errors: OffsiteError with a stable `code` (see OffsiteErrorCode).
 * - Tests of any package: `@vtl/offsite/testing/rgw` (startTestRgw, a real Ceph RGW on 127.0.0.1).
 */
export { s3For, type RemoteConnection, type S3ClientOptions } from './remote.js';
export { OffsiteError, type OffsiteErrorCode } from './errors.js';
export { GENERATION, newGeneration, generationFolder, chunkName, type GenerationRef } from './layout.js';
export { LedgerEntry, Manifest, Topology, SystemFile } from './schemas.js';
export { probeRemote, type ProbeResult } from './probe.js';
export { listObjects, deleteFolder, type RemoteObject } from './objects.js';
export {
  scanBucket,
  readManifest,
  readTopology,
  writeTopology,
  readSystemFile,
  writeSystemFile,
  type ScannedGeneration,
  type BucketScan,
} from './catalog.js';
export {
  CodecPool,
  DEFAULT_CODEC_NICE,
  DEFAULT_IMPORT_NICE,
  DEFAULT_ZSTD_LEVEL,
} from './codec/codec-pool.js';
export { DEFAULT_CHUNK_BYTES } from './chunk-math.js';
export {
  exportCartridge,
  noExportStages,
  type ExportOptions,
  type ExportStages,
  type TransferProgress,
} from './export.js';
export { verifyGeneration, type VerifyOptions } from './verify.js';
export { importCartridge, noStages, type ImportOptions, type ImportStages } from './import.js';
export { CARTRIDGE_BASE_FILES as CARTRIDGE_FILES } from '@vtl/api';
