import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Per connection: when it was accepted, and whether a response was sent on it yet. */
interface ConnectionTimes {
  acceptedAt: number;
  answered: boolean;
}

const times = new WeakMap<FastifyInstance, Map<string, ConnectionTimes>>();
const peer = (s: Pick<Socket, 'remoteAddress' | 'remotePort'>) => `${s.remoteAddress}|${s.remotePort}`;

/**
 * Tracks when each connection was accepted (at the TCP level, before the TLS handshake and any
 * queueing in this process) and when its last response finished. Together they bound when a
 * request was sent: not before max(accepted, last response). On a busy appliance a burst of N
 * requests is accepted at once but handled over hundreds of milliseconds; decisions that must
 * refer to what the sender saw (a retry of "this" failure) use this instead of the handling time.
 */
export function registerArrival(app: FastifyInstance): void {
  const byPeer = new Map<string, ConnectionTimes>();
  times.set(app, byPeer);
  app.server.on('connection', (socket: Socket) => {
    const key = peer(socket);
    byPeer.set(key, { acceptedAt: Date.now(), answered: false });
    socket.once('close', () => byPeer.delete(key));
  });
  app.addHook('onResponse', async (request) => markAnswered(app, request.raw.socket));
}

/** Records that a response went out on this connection (also for answers that bypass Fastify). */
export function markAnswered(
  app: FastifyInstance,
  socket: Pick<Socket, 'remoteAddress' | 'remotePort'>,
): void {
  const t = timesOf(app, socket);
  if (t) t.answered = true;
}

/** Each connection's record by its socket (the TLS socket a request names is not the accepted one). */
const bySocket = new WeakMap<object, ConnectionTimes>();

/** A connection's record: found by its peer address once, then by its socket. */
function timesOf(
  app: FastifyInstance,
  socket: Pick<Socket, 'remoteAddress' | 'remotePort'>,
): ConnectionTimes | undefined {
  let t = bySocket.get(socket);
  if (t) return t;
  t = times.get(app)?.get(peer(socket));
  if (t) bySocket.set(socket, t);
  return t;
}

/**
 * About when the request was sent: the moment its connection was accepted for the first request
 * on it; for a reused (keep-alive) connection, when the request came in (onRequest), since an
 * idle connection says nothing about when its next request was written. undefined when unknown
 * (injected requests).
 */
export function sentNoEarlierThan(
  app: FastifyInstance,
  request: FastifyRequest,
  elapsedMs: number,
): number | undefined {
  const t = timesOf(app, request.raw.socket);
  if (!t) return undefined;
  return t.answered ? Date.now() - elapsedMs : t.acceptedAt;
}
