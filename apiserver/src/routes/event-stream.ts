import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { EventRecord, eventSeverity, keys } from '@vtl/api';
import type { Watch, WatchEvent } from '@vtl/store';
import type { AppContext } from '../context.js';
import { bearerToken, cachedPrincipal, resolvePrincipal } from '../services/principal.js';
import { sender, sseBytes, type SseBytes } from './sse-bytes.js';

/** A client this far behind is cut off; it reconnects and resynchronises from GET /api/status. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const KEEPALIVE = sseBytes(': keepalive\n\n');
/**
 * How often an open stream checks that its credentials still hold: a stream whose session ended
 * (logout, password change, the user deleted) or whose API key was revoked ends within a second.
 */
const CREDENTIAL_CHECK_MS = 500;

/**
 * Whether the credentials a stream was opened with still count: from the view cache's remembered
 * principals when it holds them (a map lookup), else the full resolution, which refuses
 * revoked sessions and keys. A store that cannot answer ends the stream too; the client reconnects.
 */
async function credentialsHold(ctx: AppContext, token: string | undefined): Promise<boolean> {
  if (token && ctx.views && cachedPrincipal(token, ctx.views)) return true;
  try {
    await resolvePrincipal(ctx.store, token, ctx.views ? await ctx.views.fresh() : ctx.store);
    return true;
  } catch {
    return false;
  }
}

/**
 * The credential checks of every open stream on one timer, each distinct token checked once a
 * round: 500 streams opened with one token cost one check every CREDENTIAL_CHECK_MS instead of
 * 500 timers and 500 promise chains (1,000 a second), whose garbage kept the apiserver's young
 * generation scavenging about once a second while the streams idled, each scavenge a pause an
 * event's delivery could fall into (10-60 ms on a loaded machine).
 */
export class CredentialRecheck {
  /** The streams open per token, each as what ends it. */
  private readonly streams = new Map<string | undefined, Set<() => void>>();
  private readonly checking = new Set<string | undefined>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly holds: (token: string | undefined) => Promise<boolean>,
    private readonly everyMs = CREDENTIAL_CHECK_MS,
  ) {}

  /** Checks `token` with the others until the returned function is called; `revoked` ends the stream. */
  add(token: string | undefined, revoked: () => void): () => void {
    let ends = this.streams.get(token);
    if (!ends) this.streams.set(token, (ends = new Set()));
    ends.add(revoked);
    this.timer ??= setInterval(() => this.round(), this.everyMs);
    return () => {
      ends.delete(revoked);
      if (ends.size === 0 && this.streams.get(token) === ends) this.streams.delete(token);
      if (this.streams.size === 0) this.stop();
    };
  }

  /** How many distinct tokens are checked each round. */
  get tokens(): number {
    return this.streams.size;
  }

  private round(): void {
    for (const [token, ends] of this.streams) {
      if (this.checking.has(token)) continue;
      this.checking.add(token);
      void this.holds(token)
        .then((ok) => {
          if (!ok) for (const end of [...ends]) end();
        })
        .finally(() => this.checking.delete(token));
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** One SSE message: `id` is the etcd revision (the resume point), `event` the kind. */
function frame(revision: string, e: EventRecord): string {
  const data = {
    ts: e.ts,
    kind: e.kind,
    subject: e.subject,
    severity: eventSeverity(e),
    data: { detail: e.detail, ...e.data },
  };
  return `id: ${revision}\nevent: ${e.kind.replace(/[\r\n]/g, ' ')}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The SSE frame of a journal write; undefined for deletes (the journal trimming) and bad records. */
function frameOf(e: WatchEvent): string | undefined {
  if (e.type !== 'put') return undefined;
  const parsed = EventRecord.safeParse(e.value);
  return parsed.success ? frame(e.modRevision, parsed.data) : undefined;
}

/**
 * One watch of the journal shared by every live client: each event is framed, encoded and
 * chunk-framed once (SseBytes) and the same bytes are written to all, instead of one etcd
 * watch and one parse per client. Started with the first client.
 */
class EventFanout {
  private readonly clients = new Map<(bytes: SseBytes) => void, () => void>();
  private watch: Promise<Watch> | undefined;

  constructor(private readonly ctx: AppContext) {}

  /** Adds a client once the shared watch runs; returns what removes it. */
  async join(write: (bytes: SseBytes) => void, end: () => void): Promise<() => void> {
    this.watch ??= this.ctx.store
      .watch(keys.events.prefix, { onError: () => this.reset() }, (e) => {
        const text = frameOf(e);
        if (!text) return;
        // Encoded once: each socket then only encrypts and sends the same bytes.
        const bytes = sseBytes(text);
        for (const send of this.clients.keys()) send(bytes);
      })
      .catch((err: unknown) => {
        this.watch = undefined;
        throw err;
      });
    await this.watch;
    this.clients.set(write, end);
    return () => this.clients.delete(write);
  }

  /** The shared watch ended: clients reconnect and resynchronise. */
  private reset(): void {
    this.watch = undefined;
    for (const end of [...this.clients.values()]) end();
    this.clients.clear();
  }

  async close(): Promise<void> {
    const watch = this.watch;
    this.watch = undefined;
    this.clients.clear();
    await (await watch?.catch(() => undefined))?.close();
  }
}

/** The next revision after a Last-Event-ID, when the client sent a valid one. */
function resumeFrom(lastEventId: string | string[] | undefined): string | undefined {
  const id = Array.isArray(lastEventId) ? lastEventId[0] : lastEventId;
  return id && /^\d{1,19}$/.test(id) ? (BigInt(id) + 1n).toString() : undefined;
}

/**
 * GET /api/events (§6.1): Server-Sent Events from a watch of the event journal. Diffs only: a
 * comment acknowledges the connection, then every journal event as it is written, and a comment
 * every `sseKeepaliveMs`. A reconnecting client (Last-Event-ID) gets what it missed while the
 * journal's etcd history still holds it; otherwise a comment tells it to resynchronise.
 */
export async function eventStreamRoutes(app: FastifyInstance, ctx: AppContext) {
  const open = new Set<ServerResponse>();
  const fanout = new EventFanout(ctx);
  const recheck = new CredentialRecheck((token) => credentialsHold(ctx, token));
  app.addHook('onClose', () => {
    recheck.stop();
    return fanout.close();
  });
  // Streams never end by themselves: close them, or closing the server would wait forever.
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
  });

  app.get(
    '/api/events',
    {
      config: {
        role: 'read-only',
        doc: { summary: 'Live event stream (text/event-stream)', produces: 'text/event-stream' },
      },
    },
    async (request, reply) => {
      reply.hijack();
      const res = reply.raw;
      open.add(res);
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write(': connected; resynchronise from GET /api/status\n\n');

      let watch: Watch | undefined;
      let closed = false;
      // The auth hook let the request in; the credentials are checked again while it stays open.
      const leaveRecheck = recheck.add(bearerToken(request.headers.authorization), () => {
        if (closed) return;
        request.log.info({ principal: request.principal?.name }, 'event stream ended: credentials revoked');
        close();
      });
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(keepalive);
        leaveRecheck();
        open.delete(res);
        void watch?.close();
        if (!res.writableEnded) res.end();
      };
      const send = sender(res);
      const write = (bytes: SseBytes) => {
        if (closed) return;
        // A client that does not read is cut off rather than buffered for without bound.
        if (send(bytes) > MAX_BUFFERED_BYTES) close();
      };
      const onEvent = (e: WatchEvent) => {
        const text = frameOf(e);
        if (text) write(sseBytes(text));
      };
      const keepalive = setInterval(() => write(KEEPALIVE), ctx.config.sseKeepaliveMs);
      request.raw.on('close', close);
      res.on('close', close);

      const options = { onError: () => close() };
      const from = resumeFrom(request.headers['last-event-id']);
      if (from === undefined) {
        // A fresh client shares one watch with every other: 500 clients, one etcd watch.
        try {
          const leave = await fanout.join(write, close);
          watch = { close: async () => leave() };
        } catch (err) {
          request.log.warn({ err }, 'event stream could not watch the journal');
          close();
          return;
        }
        if (closed) void watch.close();
        return;
      }
      try {
        watch = await ctx.store
          .watch(keys.events.prefix, from ? { ...options, fromRevision: from } : options, onEvent)
          .catch(async (err) => {
            if (from === undefined) throw err;
            write(sseBytes(': events since the last id are gone; resynchronise from GET /api/status\n\n'));
            return ctx.store.watch(keys.events.prefix, options, onEvent);
          });
      } catch (err) {
        // Headers are out already: end the stream; the client reconnects and tries again.
        request.log.warn({ err }, 'event stream could not watch the journal');
        close();
        return;
      }
      if (closed) void watch.close();
    },
  );
}
