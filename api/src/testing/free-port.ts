import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';

/** The lowest port handed out; below it are the well-known and registered services. */
const FLOOR = 10_000;
const ATTEMPTS = 200;

/**
 * Test processes that pick ports at once (vitest's workers) each pick from their own residue
 * class modulo STRIPES, so two of them never hand out the same port: a port is only free
 * until its user binds it, which for an appliance is seconds later.
 */
const STRIPES = 4;

/** How long this process does not hand a port out again: its first user may not have bound it yet. */
const REISSUE_AFTER_MS = 10 * 60_000;
const handedOut = new Map<number, number>();

/** This process's stripe: vitest numbers its workers from 1 (VITEST_POOL_ID); anything else is stripe 0. */
function stripe(): number {
  const id = Number(process.env.VITEST_POOL_ID);
  return Number.isInteger(id) && id > 0 ? id % STRIPES : 0;
}

/** A random port in [FLOOR, below) that belongs to this process's stripe. */
function randomPortBelow(below: number): number {
  const slots = Math.floor((below - FLOOR) / STRIPES);
  return FLOOR + Math.floor(Math.random() * slots) * STRIPES + stripe();
}

function recentlyHandedOut(port: number, now: number): boolean {
  const at = handedOut.get(port);
  return at !== undefined && now - at < REISSUE_AFTER_MS;
}

/**
 * The low end of the kernel's ephemeral range (outgoing connections and port-0 binds take their
 * ports from it), or undefined when it leaves no room above FLOOR.
 */
async function ephemeralRangeStart(): Promise<number | undefined> {
  const text = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '');
  const low = Number(text.trim().split(/\s+/)[0]);
  return Number.isInteger(low) && low > FLOOR + 1_000 ? low : undefined;
}

function listenOn(port: number): Promise<Server | undefined> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago (freePorts). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port as number;
}

/**
 * n distinct TCP ports on 127.0.0.1 that were free a moment ago, for listeners a test or a
 * benchmark starts a little later. They are picked at random below the kernel's ephemeral
 * range: a port from that range (what listen(0) gives) can be taken in the meantime as the
 * local port of any outgoing connection on the machine, and the listener then fails with
 * EADDRINUSE. No port is handed out twice within REISSUE_AFTER_MS by this process, nor ever by
 * two vitest workers (STRIPES).
 */
export async function freePorts(n: number): Promise<number[]> {
  const ephemeral = await ephemeralRangeStart();
  const servers: Server[] = [];
  try {
    for (let attempt = 0; servers.length < n; attempt++) {
      if (attempt >= ATTEMPTS) throw new Error(`no ${n} free TCP ports on 127.0.0.1 below ${ephemeral}`);
      const port = ephemeral === undefined ? 0 : randomPortBelow(ephemeral);
      if (port !== 0 && recentlyHandedOut(port, Date.now())) continue;
      const server = await listenOn(port);
      if (server) servers.push(server);
    }
    const now = Date.now();
    return servers.map((s) => {
      const addr = s.address();
      if (addr === null || typeof addr === 'string') throw new Error('no TCP address');
      handedOut.set(addr.port, now);
      return addr.port;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}
