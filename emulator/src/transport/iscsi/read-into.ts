import { Socket, type SocketConstructorOpts } from 'node:net';

/** Where socket reads land, and who is told (net.Socket's `onread` option). */
export interface ReadInto {
  /** The buffer the next read fills (called before every read). */
  buffer(): Buffer;
  /** `n` bytes landed in `buf`, the buffer handed out last. */
  received(n: number, buf: Buffer): void;
}

/**
 * Re-creates an accepted socket with the `onread` option, which `net.Server` cannot pass to
 * the sockets it accepts: reads then land in buffers the caller chooses instead of a fresh
 * 64 KiB allocation each (at gigabytes per second those allocations cost more CPU in garbage
 * collection and page faults than the data itself). The server must accept with
 * `pauseOnConnect`, so no read happened yet. Node keeps the OS handle in the private
 * `_handle`; the new socket takes it over, and the old one is destroyed without it, which
 * only settles the server's connection count.
 */
export function readInto(accepted: Socket, into: ReadInto): Socket {
  const shell = accepted as unknown as { _handle: object | null };
  const handle = shell._handle;
  if (!handle) throw new Error('the accepted socket is already closed');
  shell._handle = null;
  accepted.destroy();
  const onread = {
    buffer: () => into.buffer(),
    // Returning false would pause the socket; reading never pauses here.
    callback: (n: number, buf: Buffer) => {
      into.received(n, buf);
      return true;
    },
  };
  // `handle` is the option Node itself uses to wrap an accepted handle (not in the typings).
  return new Socket({ handle, onread, readable: true, writable: true } as SocketConstructorOpts);
}
