import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sender, sseBytes } from './sse-bytes.js';

let server: http.Server | undefined;
afterEach(() => server?.close());

/**
 * A server whose one response sends `messages` through sender() after its first comment: at
 * once, or once http has flushed that comment to the socket (`afterFlush`).
 */
async function streamed(messages: string[], version: '1.0' | '1.1', afterFlush = true): Promise<string> {
  server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': connected\n\n');
    const send = sender(res);
    const sendAll = () => {
      for (const m of messages) send(sseBytes(m));
      res.end();
    };
    if (afterFlush) setImmediate(sendAll);
    else sendAll();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // A raw request, so the test sees the bytes on the wire (chunk framing included).
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(`GET / HTTP/${version}\r\nHost: x\r\nConnection: close\r\n\r\n`),
    );
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('end', () => resolve(text.slice(text.indexOf('\r\n\r\n') + 4)));
    socket.on('error', reject);
  });
}

describe('SSE bytes written once for every client', () => {
  it('frames a message as one HTTP/1.1 chunk, written straight to the socket', async () => {
    const body = await streamed(['data: one\n\n', 'data: two €\n\n'], '1.1');
    const two = Buffer.byteLength('data: two €\n\n').toString(16);
    expect(body).toBe(`d\r\n: connected\n\n\r\nb\r\ndata: one\n\n\r\n${two}\r\ndata: two €\n\n\r\n0\r\n\r\n`);
  });

  it('keeps the order when http still holds its own first bytes (a message sent at once)', async () => {
    const body = await streamed(['data: one\n\n', 'data: two\n\n'], '1.1', false);
    expect(dechunk(body)).toBe(': connected\n\ndata: one\n\ndata: two\n\n');
  });

  it('falls back to res.write for a client that cannot take chunks (HTTP/1.0)', async () => {
    const body = await streamed(['data: one\n\n'], '1.0');
    expect(body).toBe(': connected\n\ndata: one\n\n');
  });
});

/** The payload of a chunked body. */
function dechunk(body: string): string {
  let out = '';
  let rest = Buffer.from(body);
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.subarray(0, eol).toString(), 16);
    if (size === 0) return out;
    out += rest.subarray(eol + 2, eol + 2 + size).toString();
    rest = rest.subarray(eol + 2 + size + 2);
  }
}
