import http from 'node:http';
import https from 'node:https';

/** What a download in a codec thread ended with (mapped to OffsiteError on the main thread). */
export type DownloadResult =
  | { ok: true }
  | { ok: false; status: number; s3code: string; message: string }
  | { ok: false; status: 0; errno: string; message: string }
  | { ok: false; status: 200; mismatch: string }
  /** The object arrived whole but failed a check (hash, decompression): the message says which. */
  | { ok: false; status: 200; verify: string };

const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};
const running = new Map<number, http.ClientRequest>();

/**
 * Where a download's bytes go, piece by piece as the socket delivers them: `put` returns a
 * reason to stop (the download then ends with a mismatch), or undefined to go on.
 */
export interface DownloadSink {
  /** The object's size, as the manifest records it. */
  readonly length: number;
  put(piece: Buffer, at: number): string | undefined;
}

/** A sink copying into `into` (shared memory, exactly the object's size). */
export function intoBuffer(into: Uint8Array): DownloadSink {
  return {
    length: into.length,
    put: (piece, at) => {
      into.set(piece, at);
      return undefined;
    },
  };
}

/**
 * GETs a presigned request into `sink` (exactly the object's size), so the socket buffers of a
 * chunk are allocated and collected on this thread, not the event loop's.
 */
export function download(
  id: number,
  url: string,
  headers: Record<string, string>,
  sink: DownloadSink,
  idleTimeoutMs: number,
): Promise<DownloadResult> {
  const into = { length: sink.length };
  return new Promise((resolve) => {
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:'];
    let finished = false;
    const done = (r: DownloadResult) => {
      if (finished) return;
      finished = true;
      running.delete(id);
      resolve(r);
    };
    const req = client.request(target, { method: 'GET', headers, agent }, (res) => {
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (s: string) => (body = (body + s).slice(0, 4096)));
        res.on('end', () => {
          const code =
            /<Code>([^<]*)<\/Code>/.exec(body)?.[1] ?? (status === 404 ? 'NotFound' : `HTTP ${status}`);
          const message = /<Message>([^<]*)<\/Message>/.exec(body)?.[1] ?? '';
          done({ ok: false, status, s3code: code, message });
        });
        res.on('error', (e: NodeJS.ErrnoException) =>
          done({ ok: false, status: 0, errno: e.code ?? 'ECONNRESET', message: e.message }),
        );
        return;
      }
      const length = Number(res.headers['content-length'] ?? -1);
      if (length !== into.length) {
        res.destroy();
        done({ ok: false, status: 200, mismatch: `is ${length} bytes, the manifest says ${into.length}` });
        return;
      }
      let at = 0;
      res.on('data', (piece: Buffer) => {
        if (finished) return;
        if (at + piece.length > into.length) {
          res.destroy();
          done({ ok: false, status: 200, mismatch: `is longer than its ${into.length} bytes` });
          return;
        }
        const stop = sink.put(piece, at);
        at += piece.length;
        if (stop !== undefined) {
          res.destroy();
          done({ ok: false, status: 200, verify: stop });
        }
      });
      res.on('end', () =>
        at === into.length
          ? done({ ok: true })
          : done({
              ok: false,
              status: 0,
              errno: 'ECONNRESET',
              message: `ended after ${at} of ${into.length} bytes`,
            }),
      );
      res.on('error', (e: NodeJS.ErrnoException) =>
        done({ ok: false, status: 0, errno: e.code ?? 'ECONNRESET', message: e.message }),
      );
    });
    req.setTimeout(idleTimeoutMs, () =>
      req.destroy(Object.assign(new Error(`no data for ${idleTimeoutMs} ms`), { code: 'ETIMEDOUT' })),
    );
    req.on('error', (e: NodeJS.ErrnoException) =>
      done({ ok: false, status: 0, errno: e.code ?? 'ECONNRESET', message: e.message }),
    );
    running.set(id, req);
    req.end();
  });
}

/** Stops a running download (its promise resolves with ECONNABORTED). */
export function cancelDownload(id: number): void {
  running.get(id)?.destroy(Object.assign(new Error('aborted'), { code: 'ECONNABORTED' }));
}
