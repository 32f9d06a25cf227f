import { connect, createServer, type Socket } from 'node:net';

/** A TCP relay a test can cut, to simulate a network partition between a client and etcd. */
export interface TcpProxy {
  /** URL to give the client instead of the target's. */
  endpoint: string;
  /** Drops every connection and refuses new ones until unblock(). */
  block(): void;
  unblock(): void;
  close(): Promise<void>;
}

/** Starts a relay on 127.0.0.1 to target (`http://host:port`). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const url = new URL(target);
  const sockets = new Set<Socket>();
  let blocked = false;
  const server = createServer((client) => {
    if (blocked) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(url.port), url.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
  const dropAll = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    block: () => {
      blocked = true;
      dropAll();
    },
    unblock: () => {
      blocked = false;
    },
    close: async () => {
      dropAll();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
