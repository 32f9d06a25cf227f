// The benchmark's reference: a Fastify HTTPS route that returns precomputed bytes, and an event
// stream of precomputed frames, with the appliance's own certificate. Started by control-plane.ts
// as its own process.
import fs from 'node:fs';
import path from 'node:path';
import { Buffer } from 'node:buffer';
import process from 'node:process';
import zlib from 'node:zlib';
import Fastify from 'fastify';

const [tlsDir, bodyDir] = process.argv.slice(2);
const bodies = new Map(
  fs.readdirSync(bodyDir).map((f) => [f.replace(/\.json$/, ''), fs.readFileSync(path.join(bodyDir, f))]),
);
// The same bodies gzipped ahead, for a client that takes gzip.
const gzipped = new Map([...bodies].map(([name, body]) => [name, zlib.gzipSync(body, { level: 1 })]));
const app = Fastify({
  https: {
    key: fs.readFileSync(path.join(tlsDir, 'key.pem')),
    cert: fs.readFileSync(path.join(tlsDir, 'cert.pem')),
  },
});
app.get('/ref/:name', async (request, reply) => {
  const body = bodies.get(request.params.name);
  if (!body) return reply.code(404).send({ error: 'no such body' });
  reply.type('application/json; charset=utf-8').header('vary', 'accept-encoding');
  if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? ''))
    return reply.header('content-encoding', 'gzip').send(gzipped.get(request.params.name));
  return reply.send(body);
});
// The event stream's reference: SSE connections held open, and POST /emit writes one frame of the
// size of an appliance event, stamped now, to every one of them (the same bytes to all).
const streams = new Set();
app.get('/events', (request, reply) => {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  res.write(': connected\n\n');
  streams.add(res);
  res.on('close', () => streams.delete(res));
});
let emitted = 0;
const padding = 'x'.repeat(240);
app.post('/emit', async () => {
  emitted++;
  const data = JSON.stringify({ id: emitted, ts: new Date().toISOString(), padding });
  const frame = Buffer.from(`id: ${emitted}\nevent: reference\ndata: ${data}\n\n`);
  for (const res of streams) res.write(frame);
  return { streams: streams.size };
});
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${app.server.address().port}\n`);
