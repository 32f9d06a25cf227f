import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_WRITE_BYTES, writeBody } from './view-body.js';

/** What each of the socket's writes carried: its buffers, in order (a writev is one write). */
type Writes = Buffer[][];

let server: Server;
let base: string;
let answer: { chunks: Buffer[]; writes: Writes };

/** Records the socket-level writes of a response (the ones TLS would encrypt, each as one). */
function recordWrites(socket: Socket): Writes {
  const writes: Writes = [];
  const s = socket as unknown as {
    _write: (chunk: Buffer | string, ...rest: unknown[]) => void;
    _writev: (chunks: { chunk: Buffer | string }[], ...rest: unknown[]) => void;
  };
  const asBuffer = (c: Buffer | string) => (Buffer.isBuffer(c) ? c : Buffer.from(c, 'latin1'));
  const write = s._write.bind(socket);
  const writev = s._writev.bind(socket);
  s._write = (chunk, ...rest) => {
    writes.push([asBuffer(chunk)]);
    write(chunk, ...rest);
  };
  s._writev = (chunks, ...rest) => {
    writes.push(chunks.map((c) => asBuffer(c.chunk)));
    writev(chunks, ...rest);
  };
  return writes;
}

beforeAll(async () => {
  server = createServer((_req, res) => {
    answer.writes = recordWrites(res.socket!);
    const length = answer.chunks.reduce((n, c) => n + c.length, 0);
    res.writeHead(200, ['content-type', 'application/json', 'content-length', String(length)]);
    writeBody(res, answer.chunks);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

function get(): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(base, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(parts) }));
    })
      .on('error', reject)
      .end();
  });
}

describe('writeBody', () => {
  it('sends a large kept part in a write of its own, after the header and head', async () => {
    const head = Buffer.from('{"updated_at":"2026-12-02T13:00:00.000Z",');
    const kept = Buffer.from(`"rest":"${'x'.repeat(OWN_WRITE_BYTES * 2)}"}`);
    answer = { chunks: [head, kept], writes: [] };
    const { headers, body } = await get();
    expect(body.equals(Buffer.concat([head, kept]))).toBe(true);
    expect(headers['content-length']).toBe(String(head.length + kept.length));
    // The kept buffer itself, alone: nothing for a TLS socket to copy it together with.
    expect(answer.writes.some((w) => w.length === 1 && w[0] === kept)).toBe(true);
    const before = answer.writes.slice(
      0,
      answer.writes.findIndex((w) => w[0] === kept),
    );
    expect(Buffer.concat(before.flat()).toString('latin1')).toMatch(
      /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"updated_at":"[^"]+",$/,
    );
  });

  it('sends a large one-part view after its header, alone', async () => {
    const kept = Buffer.from(`[${'1,'.repeat(OWN_WRITE_BYTES)}1]`);
    answer = { chunks: [kept], writes: [] };
    const { headers, body } = await get();
    expect(body.equals(kept)).toBe(true);
    expect(headers['content-length']).toBe(String(kept.length));
    expect(answer.writes.some((w) => w.length === 1 && w[0] === kept)).toBe(true);
  });

  it('sends a small answer, header and body, in one write', async () => {
    const head = Buffer.from('{"updated_at":"2026-12-02T13:00:00.000Z",');
    const kept = Buffer.from('"libraries":[]}');
    answer = { chunks: [head, kept], writes: [] };
    const { body } = await get();
    expect(body.toString()).toBe(`${head}${kept}`);
    expect(answer.writes.filter((w) => w.some((b) => b.length > 0))).toHaveLength(1);
  });
});
