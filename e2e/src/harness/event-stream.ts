import https from 'node:https';
import { Readable } from 'node:stream';
import { EventSource, type FetchLike } from 'eventsource';

/** One SSE message as the EventSource delivered it. */
export interface StreamEvent {
  type: string;
  lastEventId: string;
  data: any;
}

/**
 * A real EventSource (npm `eventsource`) on GET /api/events. Its fetch goes through node:https
 * (the certificate is self-signed, and the bearer token must be sent) and keeps the raw bytes,
 * because comments (connect, keepalive) never reach EventSource listeners.
 */
export class EventStream {
  readonly events: StreamEvent[] = [];
  /** Raw text of every connection, in order; a reconnect starts a new entry. */
  readonly raw: string[] = [];
  readonly source: EventSource;
  private readonly agent = new https.Agent({ rejectUnauthorized: false });

  constructor(baseUrl: string, token: string, kinds: string[]) {
    const fetch: FetchLike = (url, init) =>
      new Promise((resolve, reject) => {
        const req = https.request(
          url,
          { headers: { ...init.headers, authorization: `Bearer ${token}` }, agent: this.agent },
          (res) => {
            const index = this.raw.push('') - 1;
            res.on('data', (chunk: Buffer) => (this.raw[index] += chunk.toString('utf8')));
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
            resolve({
              body: Readable.toWeb(res) as any,
              url: String(url),
              status: res.statusCode ?? 0,
              redirected: false,
              headers,
            });
          },
        );
        init.signal?.addEventListener?.('abort', () => req.destroy());
        req.on('error', reject);
        req.end();
      });
    this.source = new EventSource(new URL('/api/events', baseUrl), { fetch });
    for (const kind of kinds)
      this.source.addEventListener(kind, (e) =>
        this.events.push({ type: e.type, lastEventId: e.lastEventId, data: JSON.parse(e.data) }),
      );
  }

  close(): void {
    this.source.close();
    this.agent.destroy();
  }
}
