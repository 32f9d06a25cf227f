import type { ServerResponse } from 'node:http';

/** One SSE message encoded once: its bytes, and the same as one HTTP/1.1 chunk. */
export interface SseBytes {
  raw: Buffer;
  chunk: Buffer;
}

/** Encodes a message once for every client: raw, and framed as a chunk of a chunked response. */
export function sseBytes(text: string): SseBytes {
  const raw = Buffer.from(text);
  return { raw, chunk: Buffer.concat([Buffer.from(`${raw.length.toString(16)}\r\n`), raw, CRLF]) };
}

const CRLF = Buffer.from('\r\n');

/**
 * How a stream writes its messages; returns the bytes still waiting to go out. A chunked
 * HTTP/1.1 response (every SSE client that speaks HTTP/1.1) gets the message's ready-made chunk
 * straight on its socket: one write, no per-client framing in http's ServerResponse, so an
 * event reaches 500 clients in one pass of socket writes. The response must have sent its head
 * and first chunk already (the route writes its `: connected` comment first), and a message goes
 * through res.write while http still holds bytes of its own; res.end() writes the closing chunk. Others (HTTP/1.0, no socket) go through res.write.
 */
export function sender(res: ServerResponse): (bytes: SseBytes) => number {
  const socket = res.socket;
  const chunked = (res as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding === true;
  if (!socket || !chunked || !res.headersSent)
    return (bytes) => {
      res.write(bytes.raw);
      return res.writableLength;
    };
  return (bytes) => {
    if (!socket.writable) return 0;
    // http may still hold the head or an earlier chunk of its own (Node 26 keeps a response's
    // first writes until the next tick): going around it would put these bytes before them.
    if (res.writableLength > socket.writableLength) {
      res.write(bytes.raw);
      return res.writableLength;
    }
    socket.write(bytes.chunk);
    return socket.writableLength;
  };
}
