import type { Server, Socket } from 'node:net';
import type { Logger } from 'pino';

/** A refused address is logged at most this often, so a flood cannot flood the log too. */
const LOG_EVERY_MS = 60_000;

/**
 * Caps the connections one client address holds open on a listener: a connection past `max` is
 * closed as it arrives, before any TLS work. Counted on the raw TCP sockets, so connections that
 * never finish (or never start) their handshake count too. Other addresses are unaffected.
 */
export function capConnectionsPerClient(server: Server, max: number, log: Logger): void {
  const open = new Map<string, number>();
  const loggedAt = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = open.get(address) ?? 0;
    if (count >= max) {
      socket.destroy();
      const now = Date.now();
      if (now - (loggedAt.get(address) ?? 0) >= LOG_EVERY_MS) {
        loggedAt.set(address, now);
        log.warn(
          { client: address, max },
          'connection refused: this address holds the most connections allowed',
        );
      }
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else {
        open.delete(address);
        loggedAt.delete(address);
      }
    });
  });
}
