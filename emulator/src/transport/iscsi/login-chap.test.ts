import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChapCredentials } from './chap.js';
import { CHAP_FREE_FAILURES } from './chap-throttle.js';
import { Op } from './pdu.js';
import { parseKeys, serializeKeys } from './text-keys.js';
import { RawInitiator, type RawChap } from './testing/raw-initiator.js';
import { TEST_INITIATOR, TEST_TARGET, type TestTarget, startTestTarget } from './testing/test-target.js';

const OTHER = 'iqn.2024-01.org.vtl.test:host2';
const SECRET = 'Secret-Of-Host1';
const MUTUAL_SECRET = 'Target-Secret-9';
const ONE_WAY: ChapCredentials = { username: 'host1', secret: SECRET };
const MUTUAL: ChapCredentials = { ...ONE_WAY, mutual_username: 'vtl-target', mutual_secret: MUTUAL_SECRET };

let t: TestTarget | undefined;
const clients: RawInitiator[] = [];
let logLines: string[] = [];

/** A target where TEST_INITIATOR has `credentials` and OTHER has none; its log is kept. */
async function start(
  credentials: ChapCredentials,
  extra: Partial<Parameters<typeof startTestTarget>[0]> = {},
): Promise<void> {
  logLines = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  t = await startTestTarget({
    logger: pino({ level: 'info' }, sink),
    chap: (name) => (name === TEST_INITIATOR ? credentials : undefined),
    ...extra,
  });
}

async function login(
  chap: RawChap | undefined,
  opts: { initiatorName?: string; securityStage?: string } = {},
) {
  const c = await RawInitiator.connect(t!.target.port);
  clients.push(c);
  const result = await c.login({
    initiatorName: opts.initiatorName ?? TEST_INITIATOR,
    targetName: TEST_TARGET,
    ...(chap ? { chap } : {}),
    ...(opts.securityStage ? { securityStage: opts.securityStage } : {}),
  });
  return { c, result };
}

/** Expects a refusal with AUTHENTICATION FAILURE, the connection closed and the reason logged. */
async function refused(chap: RawChap | undefined, reason: RegExp, opts: Parameters<typeof login>[1] = {}) {
  const { c, result } = await login(chap, opts);
  expect(result.status).toBe(0x0201);
  await c.closedByTarget();
  const line = logLines.find((l) => l.includes('login refused'));
  expect(line).toBeDefined();
  expect(JSON.parse(line!)).toMatchObject({ status: '201', reason: expect.stringMatching(reason) });
  expect(t!.target.sessions()).toHaveLength(0);
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await t?.target.stop();
  t = undefined;
  // No secret ever reaches the log, whatever happened in the test.
  for (const line of logLines) {
    expect(line).not.toContain(SECRET);
    expect(line).not.toContain(MUTUAL_SECRET);
  }
});

describe('iSCSI login with CHAP', () => {
  it('locks an initiator name out after repeated wrong secrets, even for the right one, and says so', async () => {
    const lockouts: [string, number, number][] = [];
    await start(ONE_WAY, { onChapLockout: (name, failures, ms) => lockouts.push([name, failures, ms]) });
    for (let i = 0; i <= CHAP_FREE_FAILURES; i++)
      await refused({ username: 'host1', secret: `guess-${i}-xxxxxx` }, /CHAP_R is wrong/);
    expect(lockouts).toEqual([[TEST_INITIATOR, CHAP_FREE_FAILURES + 1, 1000]]);
    // Locked out: the right secret is refused too, so the lockout tells a guesser nothing.
    const { c, result } = await login({ username: 'host1', secret: SECRET });
    expect(result.status).toBe(0x0201);
    await c.closedByTarget();
    expect(logLines.some((l) => l.includes('too many wrong CHAP answers'))).toBe(true);
    // The lockout ends by itself; then the right secret logs in and the count starts afresh.
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await login({ username: 'host1', secret: SECRET })).result.status).toBe(0);
  });

  it('admits the initiator that answers the challenge with its secret (one-way)', async () => {
    await start(ONE_WAY);
    const { result } = await login({ username: 'host1', secret: SECRET });
    expect(result.status).toBe(0);
    expect(result.keys.get('AuthMethod')).toBe('CHAP');
    expect(result.keys.get('CHAP_A')).toBe('5');
    expect(result.keys.get('CHAP_C')).toMatch(/^0x[0-9a-f]{32}$/);
    // The security stage carries security keys only; declarations come in the operational stage.
    const [, challengePdu, answerPdu, operationalPdu] = result.pdus;
    expect(challengePdu!.data.toString()).not.toContain('MaxRecvDataSegmentLength');
    expect(answerPdu!.data.length).toBe(0);
    expect(answerPdu!.bhs[1]! & 0x80).toBe(0x80); // transit granted once authenticated
    expect(operationalPdu!.data.toString()).toContain('MaxRecvDataSegmentLength=');
    expect(t!.target.sessions()).toEqual([expect.objectContaining({ initiatorName: TEST_INITIATOR })]);

    // Every login gets its own challenge.
    const again = await login({ username: 'host1', secret: SECRET });
    expect(again.result.status).toBe(0);
    expect(again.result.keys.get('CHAP_C')).not.toBe(result.keys.get('CHAP_C'));
  });

  it('refuses a wrong secret, a wrong username and a missing answer', async () => {
    await start(ONE_WAY);
    await refused({ username: 'host1', secret: 'Not-The-Secret' }, /CHAP_R is wrong/);
    logLines = [];
    await refused({ username: 'someone', secret: SECRET }, /CHAP_N is not the CHAP username/);
    logLines = [];
    await refused({ username: 'host1', secret: SECRET, omitResponse: true }, /did not answer/);
  });

  it('refuses an initiator that offers no CHAP or skips the security stage', async () => {
    await start(ONE_WAY);
    await refused(undefined, /CHAP is required.*None/, { securityStage: 'None' });
    logLines = [];
    // Straight to the operational stage, as an initiator without credentials would go.
    await refused(undefined, /skipped the CHAP exchange/);
  });

  it('refuses algorithms other than MD5 cleanly', async () => {
    await start(ONE_WAY);
    await refused({ username: 'host1', secret: SECRET, algorithms: '7,6' }, /only MD5/);
  });

  it('answers the initiator challenge with the target name and secret (mutual)', async () => {
    await start(MUTUAL);
    const challenge = Buffer.from('0123456789abcdef0123');
    const { result } = await login({
      username: 'host1',
      secret: SECRET,
      mutual: { identifier: 77, challenge },
    });
    expect(result.status).toBe(0);
    expect(result.keys.get('CHAP_N')).toBe('vtl-target');
    const expected = createHash('md5')
      .update(Buffer.from([77]))
      .update(MUTUAL_SECRET)
      .update(challenge)
      .digest('hex');
    expect(result.keys.get('CHAP_R')).toBe(`0x${expected}`);
  });

  it('refuses a reflected challenge and a mutual set-up the initiator does not use', async () => {
    await start(MUTUAL);
    await refused(
      { username: 'host1', secret: SECRET, mutual: { identifier: 1, challenge: 'reflect' } },
      /reflection/,
    );
    logLines = [];
    await refused({ username: 'host1', secret: SECRET }, /did not challenge the target/);
  });

  it('refuses an initiator challenge when no mutual CHAP is set', async () => {
    await start(ONE_WAY);
    await refused(
      { username: 'host1', secret: SECRET, mutual: { identifier: 1, challenge: Buffer.alloc(16, 7) } },
      /no mutual CHAP is set/,
    );
  });

  it('keeps an initiator that asks to move on early in the security stage until CHAP is done', async () => {
    await start(ONE_WAY);
    const c = await RawInitiator.connect(t!.target.port);
    clients.push(c);
    const bhs = Buffer.alloc(48);
    bhs[0] = Op.LOGIN_REQUEST | 0x40;
    bhs[1] = 0x80 | 0x01; // T=1, CSG=0 (security), NSG=1 (operational)
    Buffer.from([0x80, 0, 0, 0, 0, 9]).copy(bhs, 8);
    c.send(
      bhs,
      serializeKeys([
        ['InitiatorName', TEST_INITIATOR],
        ['TargetName', TEST_TARGET],
        ['AuthMethod', 'CHAP,None'],
      ]),
    );
    const reply = await c.next();
    expect(reply.bhs.readUInt16BE(36)).toBe(0);
    expect(reply.bhs[1]! & 0x80).toBe(0); // no transit: CHAP comes first
    expect(parseKeys(reply.data).pairs).toContainEqual(['AuthMethod', 'CHAP']);
  });

  it('leaves initiators without CHAP on AuthMethod=None', async () => {
    await start(ONE_WAY);
    const { result } = await login(undefined, { initiatorName: OTHER, securityStage: 'CHAP,None' });
    expect(result.status).toBe(0);
    expect(result.keys.get('AuthMethod')).toBe('None');
    expect(result.keys.has('CHAP_C')).toBe(false);
  });

  it('authenticates discovery sessions with the same credentials', async () => {
    await start(ONE_WAY);
    const c = await RawInitiator.connect(t!.target.port);
    clients.push(c);
    const ok = await c.login({
      initiatorName: TEST_INITIATOR,
      sessionType: 'Discovery',
      chap: { username: 'host1', secret: SECRET },
    });
    expect(ok.status).toBe(0);
    const d = await RawInitiator.connect(t!.target.port);
    clients.push(d);
    const bad = await d.login({ initiatorName: TEST_INITIATOR, sessionType: 'Discovery' });
    expect(bad.status).toBe(0x0201);
  });
});
