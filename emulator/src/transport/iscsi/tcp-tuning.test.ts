import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type Socket, connect } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { RawInitiator } from './testing/raw-initiator.js';
import { TEST_INITIATOR, TEST_TARGET, type TestTarget, startTestTarget } from './testing/test-target.js';

let t: TestTarget | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await t?.target.stop();
  t = undefined;
});

const systemDefault = () => readFileSync('/proc/sys/net/ipv4/tcp_congestion_control', 'utf8').trim();

/** The congestion control the kernel reports for the target's side of a connection (ss, iproute2). */
async function congestionOfAcceptedConnection(port: number): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise((resolve) => socket.once('connect', resolve));
  const ss = execFileSync('ss', ['-tinH', 'state', 'established', `( sport = :${port} )`], {
    encoding: 'utf8',
  });
  const algorithm = /\b(cubic|reno|bbr|dctcp|vegas|westwood|htcp)\b/.exec(ss)?.[1];
  if (!algorithm) throw new Error(`no congestion control in ss output: ${ss}`);
  return algorithm;
}

function captureLogs(): {
  logger: pino.Logger;
  lines: Array<{ level: number; msg: string; reason?: string }>;
} {
  const lines: Array<{ level: number; msg: string; reason?: string }> = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { logger, lines };
}

describe('TCP congestion control of iSCSI connections', () => {
  it('gives every accepted connection the configured algorithm', async () => {
    // reno is built into every Linux kernel, and differs from any distribution default.
    t = await startTestTarget({ tcpCongestion: 'reno' });
    expect(await congestionOfAcceptedConnection(t.target.port)).toBe('reno');
    // The connection still carries iSCSI as usual.
    const c = await RawInitiator.connect(t.target.port);
    const login = await c.login({ initiatorName: TEST_INITIATOR, targetName: TEST_TARGET });
    expect(login.status).toBe(0);
    c.close();
  });

  it("keeps the system's algorithm when told nothing", async () => {
    const { logger, lines } = captureLogs();
    t = await startTestTarget({ logger });
    expect(await congestionOfAcceptedConnection(t.target.port)).toBe(systemDefault());
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  });

  it("serves with the system's algorithm and says what to do when the kernel lacks the one asked for", async () => {
    const { logger, lines } = captureLogs();
    t = await startTestTarget({ logger, tcpCongestion: 'nosuchalgo' });
    expect(await congestionOfAcceptedConnection(t.target.port)).toBe(systemDefault());
    const warning = lines.find((l) => l.level === 40);
    expect(warning?.reason).toMatch(/does not offer it/);
    expect(warning?.msg).toMatch(/VTL_ISCSI_TCP_CONGESTION/);
  });
});
