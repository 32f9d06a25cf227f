import http from 'node:http';
import https from 'node:https';

/** What a download in a codec thread ended with (mapped to OffsiteError on the main thread). */
export type DownloadResult =
  | { ok: true }
  | { ok: false; status: number; s3code: string; message: string }
  | { ok: false; status: 0; errno: string; message: string }
  | { ok: false; status: 200; mismatch: string };

const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};
const running = new Map<number, http.ClientRequest>();

/**
 * GETs a presigned request straight into `into` (shared memory, exactly the object's size), so
 * the socket buffers of a chunk are allocated and collected on this thread, not the event loop's.
 */
export function download(
  id: number,
  url: string,
  headers: Record<string, string>,
  into: Uint8Array,
  idleTimeoutMs: number,
): Promise<DownloadResult> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:'];
    const done = (r: DownloadResult) => {
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
        if (at + piece.length > into.length) {
          res.destroy();
          done({ ok: false, status: 200, mismatch: `is longer than its ${into.length} bytes` });
          return;
        }
        into.set(piece, at);
        at += piece.length;
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
