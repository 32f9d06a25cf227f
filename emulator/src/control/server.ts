import { setTimeout as delay } from 'node:timers/promises';
import { mkdir, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { VtlError } from '@vtl/api/base';
import type { Logger } from 'pino';
import type { EventBus } from '../events.js';
import { LineReader, encodeLine } from './framing.js';
import type { Handlers } from './handlers.js';
import type { Notification, Response } from './protocol.js';

export interface ControlServerOptions {
  socketPath: string;
  handlers: Handlers;
  events: EventBus;
  logger: Logger;
}

/** How long close() lets clients read their last replies before cutting them off. */
const CLOSE_GRACE_MS = 1_000;

/**
 * The emulator's end of the control socket. Every client may send requests and receives every
 * event. Clients come and go (a nodeagent restart): the emulator keeps serving without them.
 */
export class ControlServer {
  private readonly clients = new Set<Socket>();
  private readonly unsubscribe: () => void;

  private constructor(
    private readonly server: Server,
    private readonly opts: ControlServerOptions,
  ) {
    this.unsubscribe = opts.events.subscribe((event) => this.broadcast({ event }));
    server.on('connection', (socket) => this.accept(socket));
  }

  /**
   * Listens on the socket path, replacing a stale socket file but never a live emulator's.
   *
   * A client connects the moment the socket file exists (the nodeagent retries every few
   * milliseconds while the emulator starts), so connections are handled from before the first
   * can arrive: one accepted with no handler yet stayed open and unanswered for the process's
   * life (1 start in 100 in a loop). The file is born root-only (the nodeagent runs as root;
   * nothing else may move cartridges): a chmod after bind left it for a moment with the mode the
   * process's umask gave, and a connection made then would outlive the chmod.
   */
  static async listen(opts: ControlServerOptions): Promise<ControlServer> {
    await mkdir(dirname(opts.socketPath), { recursive: true });
    if (await socketAnswers(opts.socketPath)) {
      throw new VtlError('conflict', `another emulator is listening on ${opts.socketPath}; stop it first`);
    }
    await rm(opts.socketPath, { force: true });
    const control = new ControlServer(createServer(), opts);
    try {
      await new Promise<void>((resolve, reject) => {
        control.server.once('error', reject);
        // Node binds a unix socket synchronously inside listen(), so the mask covers its creation.
        const mask = process.umask(0o177);
        try {
          control.server.listen(opts.socketPath, () => {
            control.server.off('error', reject);
            resolve();
          });
        } finally {
          process.umask(mask);
        }
      });
    } catch (err) {
      control.unsubscribe();
      throw err;
    }
    return control;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  broadcast(message: Notification): void {
    const line = encodeLine(message);
    for (const socket of this.clients) if (socket.writable) socket.write(line);
  }

  /**
   * Stops listening and lets clients read their last replies for a grace period; then every
   * connection still open is cut and close() returns, whether or not the server has counted its
   * last connection closed. A CI run left an emulator alive for good after "emulator stopping":
   * its listener closed, one accepted control connection open but no longer polled by Node, so
   * the server's close callback never came and the process never exited.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.unsubscribe();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.clients) socket.end();
    await Promise.race([closed, delay(CLOSE_GRACE_MS)]);
    for (const socket of this.clients) socket.destroy();
    await Promise.race([closed, delay(CLOSE_GRACE_MS)]);
    await rm(this.opts.socketPath, { force: true });
  }

  private closing = false;

  private accept(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.clients.add(socket);
    const log = this.opts.logger;
    const reader = new LineReader(
      (line) => void this.handle(socket, line),
      () => {
        log.warn('control client sent an oversized line; dropping it');
        socket.destroy();
      },
    );
    socket.on('data', (chunk) => reader.push(chunk));
    socket.on('error', (err) => log.debug({ err }, 'control client socket error'));
    socket.on('close', () => this.clients.delete(socket));
  }

  private async handle(socket: Socket, line: string): Promise<void> {
    let id = 0;
    let reply: Response;
    try {
      const req = parseRequest(line);
      id = req.id;
      const handler = this.opts.handlers[req.method as keyof Handlers];
      if (!handler) throw new VtlError('bad_request', `unknown method "${req.method}"`);
      reply = { id, ok: true, result: await handler(req.params) };
      this.opts.logger.debug({ method: req.method, id }, 'control request served');
    } catch (err) {
      reply = { id, ok: false, error: toWireError(err) };
      if (!(err instanceof VtlError) || err.code === 'internal') {
        this.opts.logger.error({ err, id }, 'control request failed');
      }
    }
    if (socket.writable) socket.write(encodeLine(reply));
  }
}

function parseRequest(line: string): { id: number; method: string; params: unknown } {
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    throw new VtlError('bad_request', 'request is not valid JSON; send one JSON object per line');
  }
  const m = msg as { id?: unknown; method?: unknown; params?: unknown };
  if (typeof msg !== 'object' || msg === null || typeof m.id !== 'number' || typeof m.method !== 'string') {
    throw new VtlError('bad_request', 'request needs a numeric "id" and a string "method"');
  }
  return { id: m.id, method: m.method, params: m.params };
}

function toWireError(err: unknown): { code: string; message: string } {
  if (err instanceof VtlError) return { code: err.code, message: err.message };
  // Internal failures say where to look, not what broke inside.
  return { code: 'internal', message: 'the emulator failed to carry out the request; see its log' };
}

/** True when something accepts connections on the path (a live emulator, not a stale file). */
function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    // Refused, missing, or not a socket at all: nobody is there, the file is stale.
    probe.once('error', () => resolve(false));
  });
}
