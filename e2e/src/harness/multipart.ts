import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import https from 'node:https';
import type { Readable } from 'node:stream';

export interface UploadAnswer {
  status: number;
  body: any;
}

/**
 * POSTs a multipart/form-data body (fields, then one file field) over HTTPS with a bearer token,
 * streaming the file. `file` is a path, or a stream of unknown length sent chunked (the
 * oversize test). Resolves with the status and the JSON answer even when the server answers
 * before the body is sent.
 */
export async function postMultipart(opts: {
  baseUrl: string;
  token: string;
  path: string;
  fields?: Record<string, string>;
  fileField: string;
  file: string | Readable;
}): Promise<UploadAnswer> {
  const boundary = `----vtl-e2e-${Date.now().toString(16)}`;
  const head = Buffer.from(
    [
      ...Object.entries(opts.fields ?? {}).map(
        ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
      ),
      `--${boundary}\r\nContent-Disposition: form-data; name="${opts.fileField}"; filename="bundle.tar.gz"\r\n` +
        'Content-Type: application/gzip\r\n\r\n',
    ].join(''),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const headers: Record<string, string> = {
    'content-type': `multipart/form-data; boundary=${boundary}`,
    authorization: `Bearer ${opts.token}`,
  };
  const stream = typeof opts.file === 'string' ? createReadStream(opts.file) : opts.file;
  if (typeof opts.file === 'string')
    headers['content-length'] = String(head.length + (await fs.stat(opts.file)).size + tail.length);
  return new Promise((resolve, reject) => {
    let stopped = false;
    const req = https.request(
      new URL(opts.path, opts.baseUrl),
      { method: 'POST', headers, rejectUnauthorized: false },
      (res) => {
        // An early answer (a refusal) ends the upload: the rest of the body would be dropped anyway.
        stream.unpipe?.();
        stream.pause();
        stopped = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          stream.destroy();
          req.destroy();
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    // The server may answer and close before the whole body went out (the oversize refusal).
    req.on('error', (err) => reject(err));
    req.write(head);
    stream.on('data', (c: Buffer) => {
      if (!stopped && !req.write(c)) stream.pause();
    });
    req.on('drain', () => !stopped && stream.resume());
    stream.on('end', () => !stopped && req.end(tail));
  });
}
