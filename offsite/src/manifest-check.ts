import type { S3Client } from '@aws-sdk/client-s3';
import { chunksSha256 } from './chunk-math.js';
import { OffsiteError } from './errors.js';
import { CHUNK_FILE, chunkName, keysOf, type GenerationRef } from './layout.js';
import { getJson, listFullKeys } from './objects.js';
import { describeRemote, type RemoteConnection } from './remote.js';
import { Manifest } from './schemas.js';

/**
 * Reads a generation's manifest and checks it against itself and against the folder listing:
 * the chunks are numbered 0..n-1 with contiguous offsets and the recorded totals, every chunk
 * object is there with its recorded size, and there are no other chunk objects.
 * 'not_found' without a manifest; 'verify_failed' naming what does not match.
 */
export async function loadCheckedManifest(
  s3: S3Client,
  remote: RemoteConnection,
  ref: GenerationRef,
  signal?: AbortSignal,
): Promise<Manifest> {
  const keys = keysOf(remote);
  const where = describeRemote(remote);
  const folder = keys.generation(ref);
  const manifest = await getJson(s3, remote, keys.manifest(ref), Manifest, signal);
  if (!manifest) {
    throw new OffsiteError(
      'not_found',
      `${folder} in ${where} has no manifest: the generation is absent or its export never finished`,
    );
  }
  const bad = (why: string): never => {
    throw new OffsiteError('verify_failed', `the manifest of ${folder} in ${where} ${why}`);
  };
  for (const field of ['system', 'library_serial', 'label', 'generation'] as const) {
    if (manifest[field] !== ref[field]) bad(`names ${field} "${manifest[field]}", expected "${ref[field]}"`);
  }
  let rawTotal = 0;
  let storedTotal = 0;
  for (const [i, c] of manifest.chunks.entries()) {
    if (c.n !== i || c.key !== keys.chunk(ref, i))
      bad(`lists chunk ${c.n} (${c.key}) where ${chunkName(i)} belongs`);
    if (c.raw_offset !== rawTotal)
      bad(`puts ${chunkName(i)} at tar offset ${c.raw_offset}, expected ${rawTotal}`);
    const last = i === manifest.chunks.length - 1;
    if (last ? c.raw_bytes > manifest.chunk_bytes : c.raw_bytes !== manifest.chunk_bytes) {
      bad(`gives ${chunkName(i)} ${c.raw_bytes} tar bytes with chunk size ${manifest.chunk_bytes}`);
    }
    rawTotal += c.raw_bytes;
    storedTotal += c.stored_bytes;
  }
  if (manifest.chunks.length === 0) bad('lists no chunks');
  if (rawTotal !== manifest.tar_bytes)
    bad(`has chunks of ${rawTotal} tar bytes in all, but tar_bytes ${manifest.tar_bytes}`);
  if (storedTotal !== manifest.stored_bytes)
    bad(`has chunks of ${storedTotal} stored bytes, but stored_bytes ${manifest.stored_bytes}`);
  if (chunksSha256(manifest.chunks.map((c) => c.sha256)) !== manifest.chunks_sha256) {
    bad('has a chunks_sha256 that does not match its chunks');
  }

  const listed = new Map<string, number>();
  for (const o of await listFullKeys(s3, remote, folder, signal)) listed.set(o.key, o.size);
  for (const c of manifest.chunks) {
    const size = listed.get(c.key);
    if (size === undefined) {
      throw new OffsiteError('verify_failed', `${chunkName(c.n)} of ${folder} is missing from ${where}`);
    }
    if (size !== c.stored_bytes) {
      throw new OffsiteError(
        'verify_failed',
        `${chunkName(c.n)} of ${folder} in ${where} is ${size} bytes, the manifest says ${c.stored_bytes}`,
      );
    }
    listed.delete(c.key);
  }
  const extra = [...listed.keys()].map((k) => k.slice(folder.length)).filter((name) => CHUNK_FILE.test(name));
  if (extra.length > 0) bad(`does not list ${extra.join(', ')}, which the folder holds`);
  return manifest;
}
