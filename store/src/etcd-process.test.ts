import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEtcd } from '@vtl/etcd-launcher';
import { freePorts } from '@vtl/api/testing/free-port';
import { Store } from './store.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vtl-etcd-proc-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startEtcd', () => {
  it('starts a healthy etcd that keeps its data across a stop and restart', async () => {
    const [clientPort, peerPort] = (await freePorts(2)) as [number, number];
    const opts = { dataDir: join(dir, 'data'), clientPort, peerPort, logFile: join(dir, 'etcd.log') };
    const etcd = await startEtcd(opts);
    expect(etcd.endpoint).toBe(`http://127.0.0.1:${clientPort}`);
    const store = await Store.connect({ endpoints: [etcd.endpoint] });
    await store.put('/t/persist', { ok: true });
    await store.close();
    await etcd.stop();
    expect(alive(etcd.pid)).toBe(false);
    expect(await readFile(opts.logFile, 'utf8')).toContain('etcd');

    const again = await startEtcd(opts);
    const reopened = await Store.connect({ endpoints: [again.endpoint] });
    expect(await reopened.count('/t/persist')).toBe(1);
    await reopened.close();
    await again.kill();
    expect(alive(again.pid)).toBe(false);
  });

  it('fails fast with an error naming the log file when etcd cannot start', async () => {
    // It accepts and never answers, like a wrong service on the port.
    const blocker = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    const [peerPort] = (await freePorts(1)) as [number];
    const logFile = join(dir, 'fail.log');
    const started = Date.now();
    try {
      await expect(
        startEtcd({ dataDir: join(dir, 'fail'), clientPort: taken, peerPort, logFile }),
      ).rejects.toThrow(logFile);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('Store.connect refuses an endpoint where nothing answers', async () => {
    const [port] = (await freePorts(1)) as [number];
    await expect(Store.connect({ endpoints: [`http://127.0.0.1:${port}`] })).rejects.toMatchObject({
      code: 'unavailable',
    });
  });
});
