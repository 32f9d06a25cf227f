import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appliance } from './harness/appliance.js';

/** Short, so the test watches the deadline pass (the default is 10 s). */
const HANDSHAKE_MS = 2_000;
/** Small, so the test reaches it (the default is 256). */
const CAP = 16;

/** A TCP connection to the HTTPS port that never sends a byte; `closed` resolves when the server ends it. */
async function silent(
  port: number,
): Promise<{ opened: number; closed: Promise<number>; socket: net.Socket }> {
  const socket = net.connect(port, '127.0.0.1');
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  return { opened: performance.now(), closed, socket };
}

describe('HTTPS listener limits (issue 34, item 9)', () => {
  let app: Appliance;
  beforeAll(async () => {
    app = await Appliance.start({
      env: {
        VTL_TLS_HANDSHAKE_TIMEOUT_MS: String(HANDSHAKE_MS),
        VTL_MAX_CONNECTIONS_PER_CLIENT: String(CAP),
      },
    });
  });
  afterAll(async () => {
    await app?.destroy();
  });

  it('closes a connection that never sends its ClientHello once the handshake deadline passes', async () => {
    const c = await silent(app.ports.https);
    const heldMs = (await c.closed) - c.opened;
    expect(heldMs).toBeGreaterThan(HANDSHAKE_MS - 500);
    expect(heldMs).toBeLessThan(HANDSHAKE_MS + 3_000);
  });

  it('closes connections past the cap of one address at once, and serves it again once they are gone', async () => {
    const conns = [];
    for (let i = 0; i <= CAP; i++) conns.push(await silent(app.ports.https));
    // Well before any handshake deadline: the ones past the cap are closed already.
    const early = await Promise.all(
      conns.map((c) =>
        Promise.race([
          c.closed.then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), 500)),
        ]),
      ),
    );
    expect(early.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    expect(early.filter(Boolean).length).toBeLessThan(conns.length);
    for (const c of conns) c.socket.destroy();
    await Promise.all(conns.map((c) => c.closed));
    expect((await app.anonymous.get('/healthz')).status).toBe(200);
  });
});
