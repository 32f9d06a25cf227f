import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts } from './free-port.js';

describe('freePorts', () => {
  it('gives distinct ports below the ephemeral range that a listener can then take', async () => {
    const [low] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'))
      .trim()
      .split(/\s+/)
      .map(Number);
    const ports = await freePorts(5);
    expect(new Set(ports).size).toBe(5);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(low!);
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('never hands out a port twice, and only ports of its own vitest worker', async () => {
    const first = await freePorts(40);
    const second = await freePorts(40);
    expect(new Set([...first, ...second]).size).toBe(80);
    const stripe = Number(process.env.VITEST_POOL_ID) % 4;
    for (const port of [...first, ...second]) expect(port % 4).toBe(stripe);
  });
});
