import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { gzipView, keptPart } from '../services/gzip-view.js';
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

  it('sends each large part of a view in parts alone, and a gzipped one whole with its length', async () => {
    const head = Buffer.from('{"updated_at":"2026-12-02T13:00:00.000Z",');
    const libraries = keptPart(Buffer.from(`"libraries":[${'{"a":1},'.repeat(OWN_WRITE_BYTES / 4)}{}],`));
    const middle = keptPart(Buffer.from('"pools":[],"fc":{},"cartridges":'));
    const cartridges = keptPart(Buffer.from(`[${'{"label":"AAA001L8"},'.repeat(OWN_WRITE_BYTES / 8)}{}]`));
    const tail = keptPart(Buffer.from(',"fabrics":{},"gitops":[]}'));
    const chunks = [head, libraries, middle, cartridges, tail];
    const whole = Buffer.concat(chunks);
    answer = { chunks, writes: [] };
    const plain = await get();
    expect(plain.body.equals(whole)).toBe(true);
    expect(plain.headers['content-length']).toBe(String(whole.length));
    for (const large of [libraries, cartridges])
      expect(answer.writes.some((w) => w.length === 1 && w[0] === large)).toBe(true);
    // No write gathers a large part with anything else (a TLS socket would copy them together).
    for (const w of answer.writes)
      if (w.length > 1) expect(w.every((b) => b.length < OWN_WRITE_BYTES)).toBe(true);
    // The gzip form: one member, its length what is sent, decoding to the same bytes.
    answer = { chunks: gzipView(chunks), writes: [] };
    const gz = await get();
    expect(gz.headers['content-length']).toBe(String(gz.body.length));
    expect(gunzipSync(gz.body).equals(whole)).toBe(true);
  });
});
