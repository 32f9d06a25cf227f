import { createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { badRequest } from '@vtl/api';

/** §8: bodies over 512 MiB are refused. */
export const UPDATE_BODY_LIMIT = 512 * 1024 * 1024;

export interface UploadedBundle {
  force: boolean;
}

/**
 * Streams the multipart form of POST /api/system/update to disk: field `bundle` (the release
 * .tar.gz) into `file`, field `force`. Never buffers the bundle. A body over UPDATE_BODY_LIMIT
 * is refused as soon as its bytes pass the limit (or at once when Content-Length says so); the
 * partial file is deleted and the rest of the body is read and dropped so the client gets the answer.
 */
export async function receiveBundle(raw: IncomingMessage, file: string): Promise<UploadedBundle> {
  const type = raw.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type))
    throw badRequest(
      'Send the release as multipart/form-data with the file in field "bundle" (and force=1 to allow an older version).',
    );
  const declared = Number(raw.headers['content-length']);
  if (Number.isFinite(declared) && declared > UPDATE_BODY_LIMIT) {
    raw.resume();
    throw tooLarge();
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: raw.headers, limits: { files: 1, fields: 4, fieldSize: 1024, parts: 6 } });
  } catch (err) {
    raw.resume();
    throw badRequest(`The multipart form cannot be read (${(err as Error).message}).`);
  }
  let force = false;
  let sawBundle = false;
  let received = 0;
  const written: Promise<void>[] = [];
  let out: WriteStream | undefined;
  let failed = false;
  const outcome = new Promise<void>((resolve, reject) => {
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      raw.unpipe(parser);
      out?.destroy();
      raw.resume(); // drop the rest: the answer goes out once the client has sent its body
      reject(err);
    };
    raw.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > UPDATE_BODY_LIMIT) fail(tooLarge());
    });
    raw.on('error', fail);
    parser.on('field', (name, value) => {
      if (name === 'force') force = value === '1';
    });
    parser.on('file', (name, stream) => {
      if (name !== 'bundle' || sawBundle) {
        stream.resume();
        return;
      }
      sawBundle = true;
      const sink = createWriteStream(file, { mode: 0o600 });
      out = sink;
      const finished = new Promise<void>((res, rej) => {
        sink.on('finish', res);
        sink.on('error', rej);
      });
      // A refused body destroys the file mid-write: that error is expected, never unhandled.
      finished.catch(() => undefined);
      written.push(finished);
      stream.pipe(sink);
    });
    parser.on('error', (err: Error) =>
      fail(badRequest(`The multipart form cannot be read (${err.message}).`)),
    );
    parser.on('close', () => resolve());
    raw.pipe(parser);
  });
  try {
    await outcome;
    await Promise.all(written);
  } catch (err) {
    await fs.rm(file, { force: true });
    throw err;
  }
  if (!sawBundle) {
    await fs.rm(file, { force: true });
    throw badRequest('The form has no field "bundle": attach the release .tar.gz as field "bundle".');
  }
  return { force };
}

const tooLarge = () =>
  badRequest('The body is larger than 512 MiB, the most POST /api/system/update accepts (§8).', {
    reason: 'too_large',
    limit_bytes: UPDATE_BODY_LIMIT,
  });
