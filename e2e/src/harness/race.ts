import net from 'node:net';
import type { ApiResponse } from './api-client.js';

/** The answers of one burst: every response, and how many got each status. */
export interface Burst {
  responses: ApiResponse[];
  statuses: Record<number, number>;
  /** The responses with a 2xx status. */
  wins: ApiResponse[];
}

/**
 * Fires every request of `calls` at once (all started before any is awaited) and tallies the
 * answers: what a careless script or several operators do to one write endpoint.
 */
export async function burst(calls: (() => Promise<ApiResponse>)[]): Promise<Burst> {
  const responses = await Promise.all(calls.map((call) => call()));
  const statuses: Record<number, number> = {};
  for (const r of responses) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  return { responses, statuses, wins: responses.filter((r) => r.status >= 200 && r.status < 300) };
}

/** n copies of the same call. */
export const times = (n: number, call: () => Promise<ApiResponse>) => Array.from({ length: n }, () => call);

/** The error codes of the refused answers of a burst, e.g. ['conflict', 'conflict']. */
export const refusalCodes = (b: Burst) =>
  b.responses
    .filter((r) => r.status >= 300)
    .map((r) => (r.body as { error?: { code?: string } })?.error?.code ?? `status ${r.status}`);

/**
 * A TCP server that accepts connections and never answers: an S3 endpoint that hangs, so jobs
 * sent to it stay in flight for the whole test (their label stays claimed).
 */
export async function startSilentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The POST /api/remotes body of a remote at 127.0.0.1:port with throwaway credentials: an
 * endpoint that never answers (or refuses), so jobs sent there show what a stuck remote does.
 */
export const unreachableRemote = (name: string, port: number, bucket = 'b') => ({
  name,
  endpoint: `127.0.0.1:${port}`,
  bucket,
  access_key: 'k',
  secret_key: 'secret-key-never-used',
  use_ssl: false,
  path_style: true,
});
