import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { VtlError } from '@vtl/api';
import { listObjects, probeRemote, scanBucket } from '@vtl/offsite';
import { remoteCall } from './remote-call.js';

const conn = (port: number) => ({
  endpoint: `127.0.0.1:${port}`,
  region: '',
  bucket: 'b',
  prefix: '',
  access_key: 'k',
  secret_key: 's',
  use_ssl: false,
  path_style: true,
});

/** A server that accepts connections and never answers. */
async function silentServer() {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('remoteCall: one whole S3 operation under an overall deadline', () => {
  it('a remote that never answers is 504 remote_unreachable at the deadline', async () => {
    const silent = await silentServer();
    try {
      const calls: Array<[string, (s: AbortSignal) => Promise<unknown>]> = [
        ['Listing the remote', (s: AbortSignal) => listObjects(conn(silent.port), s)],
        ['Scanning the bucket', (s: AbortSignal) => scanBucket(conn(silent.port), s)],
        ['Testing the remote', (s: AbortSignal) => probeRemote(conn(silent.port), s)],
      ];
      for (const [what, fn] of calls) {
        const started = Date.now();
        const err = await remoteCall(what, conn(silent.port), 800, fn).catch((e: unknown) => e);
        const ms = Date.now() - started;
        expect(err, what).toBeInstanceOf(VtlError);
        expect((err as VtlError).code).toBe('remote_unreachable');
        expect((err as VtlError).status).toBe(504);
        expect((err as VtlError).message).toContain(`${what}: the remote at http://127.0.0.1:${silent.port}`);
        expect((err as VtlError).details).toEqual({ endpoint: `http://127.0.0.1:${silent.port}` });
        expect(ms, what).toBeGreaterThanOrEqual(790);
        expect(ms, what).toBeLessThan(3_000);
      }
    } finally {
      await silent.close();
    }
  }, 30_000);

  it('a closed port is 502 remote_refused well before the deadline', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const started = Date.now();
    const err = await remoteCall('Listing the remote', conn(port), 20_000, (s) =>
      listObjects(conn(port), s),
    ).catch((e: unknown) => e);
    expect((err as VtlError).code).toBe('remote_refused');
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);
});
