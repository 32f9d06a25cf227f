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
  app.addHook('onClose', () => fanout.close());
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
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(keepalive);
        clearInterval(recheck);
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
      // The auth hook let the request in; the credentials are checked again while it stays open.
      const token = bearerToken(request.headers.authorization);
      let checking = false;
      const recheck = setInterval(() => {
        if (checking || closed) return;
        checking = true;
        void credentialsHold(ctx, token)
          .then((ok) => {
            if (ok || closed) return;
            request.log.info(
              { principal: request.principal?.name },
              'event stream ended: credentials revoked',
            );
            close();
          })
          .finally(() => (checking = false));
      }, CREDENTIAL_CHECK_MS);
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
