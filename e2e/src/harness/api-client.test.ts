import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from './api-client.js';

describe('ApiClient', () => {
  let server: http.Server;
  let baseUrl: string;
  beforeAll(async () => {
    // Answers /ok at once; anything else is taken and never answered (a hung call).
    server = http.createServer((req, res) => {
      if (req.url === '/ok') res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('fails a call that is not answered within its timeout, naming the method and path', async () => {
    const client = new ApiClient(baseUrl, '', undefined, 200).withToken('t');
    const started = Date.now();
    await expect(client.put('/api/hung', { a: 1 })).rejects.toThrow(
      `PUT /api/hung (${baseUrl}) was not answered within 200 ms`,
    );
    await expect(client.probe('GET', '/api/hung')).rejects.toThrow(/GET \/api\/hung .* within 200 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await client.get('/ok')).status).toBe(200);
    client.close();
  });
});
