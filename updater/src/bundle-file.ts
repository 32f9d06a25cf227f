import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Writable, type Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { BUNDLE_MEMBERS } from './manifest.js';

/** manifest.json and signature.json are small; a bundle with bigger ones is not ours. */
const SMALL_MEMBER_MAX = 64 * 1024;

export class BundleFormatError extends Error {}

export interface OpenedBundle {
  manifestBytes: Buffer;
  signatureBytes: Buffer;
  /** The payload, written to `dir`. */
  payloadFile: string;
  payloadSha256: string;
  payloadSize: number;
}

/**
 * Reads a bundle (.tar.gz holding exactly manifest.json, signature.json and payload.tar.gz as
 * regular files, in that order) into `dir`, hashing the payload as it streams. Nothing is
 * trusted yet: the caller verifies the signature before reading the manifest's meaning.
 */
export async function openBundle(file: string, dir: string): Promise<OpenedBundle> {
  const extract = tar.extract();
  const small = new Map<string, Buffer>();
  const payloadFile = path.join(dir, 'payload.tar.gz');
  const hash = createHash('sha256');
  let payloadSize = 0;
  let index = 0;
  extract.on('entry', (header, stream, next) => {
    const expected = BUNDLE_MEMBERS[index++];
    const fail = (message: string) => {
      stream.resume();
      extract.destroy(new BundleFormatError(message));
    };
    if (header.name !== expected)
      return fail(`unexpected member "${header.name}" (a bundle holds ${BUNDLE_MEMBERS.join(', ')})`);
    if (header.type !== 'file') return fail(`${header.name} is not a regular file`);
    if (expected === 'payload.tar.gz') {
      const out = createWriteStream(payloadFile, { mode: 0o600 });
      stream.on('data', (data) => {
        const chunk = data as Buffer;
        hash.update(chunk);
        payloadSize += chunk.length;
      });
      pipeline(stream, out).then(
        () => next(),
        (err: Error) => extract.destroy(err),
      );
      return;
    }
    if ((header.size ?? 0) > SMALL_MEMBER_MAX) return fail(`${header.name} is larger than 64 KiB`);
    const chunks: Buffer[] = [];
    stream.on('data', (c) => chunks.push(c as Buffer));
    stream.on('end', () => {
      small.set(expected, Buffer.concat(chunks));
      next();
    });
  });
  try {
    await pipeline(createReadStream(file), createGunzip(), extract);
  } catch (err) {
    if (err instanceof BundleFormatError) throw err;
    throw new BundleFormatError(`not a readable .tar.gz bundle (${(err as Error).message})`);
  }
  if (index !== BUNDLE_MEMBERS.length)
    throw new BundleFormatError(`incomplete bundle: it must hold ${BUNDLE_MEMBERS.join(', ')}`);
  return {
    manifestBytes: small.get('manifest.json')!,
    signatureBytes: small.get('signature.json')!,
    payloadFile,
    payloadSha256: hash.digest('hex'),
    payloadSize,
  };
}

/** Writes a bundle from its three parts (the order openBundle requires). */
export async function writeBundle(
  out: string,
  manifestBytes: Buffer,
  signatureBytes: Buffer,
  payloadFile: string,
): Promise<void> {
  const pack = tar.pack();
  const done = pipeline(pack, createGzip(), createWriteStream(out));
  const mtime = new Date();
  const add = (name: string, data: Buffer) =>
    new Promise<void>((resolve, reject) =>
      pack.entry({ name, mode: 0o644, mtime }, data, (err) => (err ? reject(err) : resolve())),
    );
  await add('manifest.json', manifestBytes);
  await add('signature.json', signatureBytes);
  const size = (await fs.stat(payloadFile)).size;
  const entry = pack.entry({ name: 'payload.tar.gz', mode: 0o644, mtime, size });
  await pipeline(createReadStream(payloadFile), entry as unknown as Writable);
  pack.finalize();
  await done;
}

/** SHA-256 of a file, streamed. */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file) as Readable, hash);
  return hash.digest('hex');
}
