import https from 'node:https';
import http from 'node:http';

export interface ApiResponse<T = unknown> {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: T;
  text: string;
  /** The body's bytes, for binary downloads (the support bundle). */
  raw: Buffer;
}

/** One request and its response text, as a secret-leak check reads them afterwards. */
export interface Exchange {
  method: string;
  path: string;
  status: number;
  text: string;
}

/**
 * How long one request may take to be answered in full (the headers, for probe()) before it
 * fails naming its method and path: a hung call otherwise shows only as the test's timeout.
 * The store answers within its 5 s deadline; the slowest calls (an apply waiting for another,
 * a support bundle on a loaded machine) take seconds, not a minute.
 */
export const REQUEST_TIMEOUT_MS = 60_000;

/** A JSON client for the control API; the appliance's certificate is self-signed. */
export class ApiClient {
  private readonly agent: https.Agent | http.Agent;

  constructor(
    readonly baseUrl: string,
    readonly token = '',
    /** Every exchange is appended here when given (shared by the clients of one appliance). */
    readonly transcript?: Exchange[],
    readonly timeoutMs = REQUEST_TIMEOUT_MS,
  ) {
    this.agent = baseUrl.startsWith('https:')
      ? new https.Agent({ rejectUnauthorized: false, keepAlive: true })
      : new http.Agent({ keepAlive: true });
  }

  withToken(token: string): ApiClient {
    return new ApiClient(this.baseUrl, token, this.transcript, this.timeoutMs);
  }

  /** URL, JSON payload and headers (with the bearer token) of one request. */
  private prepare(path: string, body?: unknown) {
    const url = new URL(path, this.baseUrl);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {};
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const lib = url.protocol === 'https:' ? https : http;
    return { url, payload, headers, lib };
  }

  /**
   * Rejects with an error naming the call, and destroys req, when the call is not settled
   * within timeoutMs; returns what settling calls.
   */
  private bound(
    req: http.ClientRequest,
    method: string,
    path: string,
    reject: (err: Error) => void,
  ): () => void {
    const timer = setTimeout(() => {
      const err = new Error(
        `${method} ${path} (${this.baseUrl}) was not answered within ${this.timeoutMs} ms`,
      );
      reject(err);
      req.destroy(err);
    }, this.timeoutMs);
    return () => clearTimeout(timer);
  }

  request<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    const { url, payload, headers, lib } = this.prepare(path, body);
    return new Promise((resolve, reject) => {
      const req = lib.request(url, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => {
          settled();
          reject(err);
        });
        res.on('end', () => {
          settled();
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          let parsed: unknown = text;
          if ((res.headers['content-type'] ?? '').includes('json') && text) parsed = JSON.parse(text);
          this.transcript?.push({ method, path, status: res.statusCode ?? 0, text });
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed as T, text, raw });
        });
      });
      const settled = this.bound(req, method, path, reject);
      req.on('error', (err) => {
        settled();
        reject(err);
      });
      if (payload) req.write(payload);
      req.end();
    });
  }

  /**
   * Only the status and content type: resolves when the response headers arrive and drops the
   * rest, so it also works on a stream that never ends (GET /api/events).
   */
  probe(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; type: string; text: string }> {
    const { url, payload, headers, lib } = this.prepare(path, body);
    return new Promise((resolve, reject) => {
      const req = lib.request(url, { method, headers, agent: this.agent }, (res) => {
        const type = String(res.headers['content-type'] ?? '');
        if (type.includes('event-stream')) {
          settled();
          resolve({ status: res.statusCode ?? 0, type, text: '' });
          req.destroy();
          return;
        }
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('error', (err) => {
          settled();
          reject(err);
        });
        res.on('end', () => {
          settled();
          resolve({ status: res.statusCode ?? 0, type, text });
        });
      });
      const settled = this.bound(req, method, path, reject);
      req.on('error', (err) => {
        settled();
        reject(err);
      });
      if (payload) req.write(payload);
      req.end();
    });
  }

  get = <T = any>(path: string) => this.request<T>('GET', path);
  post = <T = any>(path: string, body: unknown = {}) => this.request<T>('POST', path, body);
  put = <T = any>(path: string, body: unknown = {}) => this.request<T>('PUT', path, body);
  delete = <T = any>(path: string, body?: unknown) => this.request<T>('DELETE', path, body);

  close() {
    this.agent.destroy();
  }
}
