import { afterEach, describe, expect, it } from 'vitest';
import { RawInitiator } from './testing/raw-initiator.js';
import { TEST_INITIATOR, TEST_TARGET, type TestTarget, startTestTarget } from './testing/test-target.js';
import { Op, opcodeOf } from './pdu.js';
import { parseKeys, serializeKeys } from './text-keys.js';

let t: TestTarget | undefined;
const clients: RawInitiator[] = [];

async function client(): Promise<RawInitiator> {
  const c = await RawInitiator.connect(t!.target.port);
  clients.push(c);
  return c;
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await t?.target.stop();
  t = undefined;
});

describe('iSCSI login', () => {
  it('negotiates operational keys and assigns a TSIH', async () => {
    t = await startTestTarget({ limits: { maxRecvDataSegmentLength: 65536, maxBurstLength: 1048576 } });
    const c = await client();
    const result = await c.login({
      initiatorName: TEST_INITIATOR,
      targetName: TEST_TARGET,
      keys: [
        ['HeaderDigest', 'CRC32C,None'],
        ['DataDigest', 'None,CRC32C'],
        ['MaxRecvDataSegmentLength', '8192'],
        ['MaxBurstLength', '16776192'],
        ['FirstBurstLength', '65536'],
        ['InitialR2T', 'No'],
        ['ImmediateData', 'Yes'],
        ['MaxOutstandingR2T', '4'],
        ['ErrorRecoveryLevel', '2'],
        ['MaxConnections', '8'],
        ['DefaultTime2Wait', '0'],
        ['DefaultTime2Retain', '20'],
        ['IFMarker', 'No'],
        ['X-com.example.Thing', 'on'],
        ['MaxBurstLength', 'lots'],
      ],
    });
    expect(result.status).toBe(0);
    expect(result.tsih).toBeGreaterThan(0);
    const k = result.keys;
    expect(k.get('HeaderDigest')).toBe('CRC32C');
    expect(k.get('DataDigest')).toBe('None');
    expect(k.get('InitialR2T')).toBe('No');
    expect(k.get('ImmediateData')).toBe('Yes');
    expect(k.get('MaxOutstandingR2T')).toBe('4');
    expect(k.get('ErrorRecoveryLevel')).toBe('0');
    expect(k.get('MaxConnections')).toBe('1');
    expect(k.get('DefaultTime2Wait')).toBe('2');
    expect(k.get('DefaultTime2Retain')).toBe('0');
    expect(k.get('IFMarker')).toBe('No');
    expect(k.get('X-com.example.Thing')).toBe('NotUnderstood');
    expect(k.get('TargetPortalGroupTag')).toBe('1');
    expect(k.get('MaxRecvDataSegmentLength')).toBe('65536');
    // The later, malformed MaxBurstLength offer is refused; the first answer (capped) stands.
    const pairs = parseKeys(result.pdus[0]!.data).pairs.filter(([key]) => key === 'MaxBurstLength');
    expect(pairs.map(([, v]) => v)).toEqual(['1048576', 'Reject']);
    const [session] = t.target.sessions();
    expect(session).toMatchObject({
      initiatorName: TEST_INITIATOR,
      type: 'Normal',
      headerDigest: true,
      tsih: result.tsih,
    });
  });

  it('runs a security stage with AuthMethod=None', async () => {
    t = await startTestTarget();
    const c = await client();
    const result = await c.login({
      initiatorName: TEST_INITIATOR,
      targetName: TEST_TARGET,
      securityStage: 'CHAP,None',
    });
    expect(result.status).toBe(0);
    expect(result.keys.get('AuthMethod')).toBe('None');
    // Each login response consumes a StatSN (RFC 7143 11.13.4).
    const [first, second] = result.pdus;
    expect(second!.bhs.readUInt32BE(24)).toBe(first!.bhs.readUInt32BE(24) + 1);
  });

  it('refuses CHAP-only initiators with an authentication failure', async () => {
    t = await startTestTarget();
    const c = await client();
    const result = await c.login({
      initiatorName: TEST_INITIATOR,
      targetName: TEST_TARGET,
      securityStage: 'CHAP',
    });
    expect(result.status).toBe(0x0201);
    await c.closedByTarget();
  });

  it('refuses an initiator the rule does not authorize (0x0202) and lets an authorized one in', async () => {
    t = await startTestTarget({ authorize: (name) => name === TEST_INITIATOR });
    const denied = await client();
    const refused = await denied.login({
      initiatorName: 'iqn.2024-01.org.vtl.test:stranger',
      targetName: TEST_TARGET,
    });
    expect(refused.status).toBe(0x0202);
    expect(refused.keys.size).toBe(0);
    await denied.closedByTarget();
    const allowed = await client();
    expect((await allowed.login({ initiatorName: TEST_INITIATOR, targetName: TEST_TARGET })).status).toBe(0);
  });

  it('denies everyone when there is no rule and the target is not open', async () => {
    t = await startTestTarget({ open: false, authorize: undefined });
    const c = await client();
    expect((await c.login({ initiatorName: TEST_INITIATOR, targetName: TEST_TARGET })).status).toBe(0x0202);
  });

  it('reports an unknown target name and missing declarations', async () => {
    t = await startTestTarget();
    const wrong = await client();
    expect(
      (await wrong.login({ initiatorName: TEST_INITIATOR, targetName: 'iqn.2024-01.org.vtl.test:other' }))
        .status,
    ).toBe(0x0203);
    const missing = await client();
    expect((await missing.login({ initiatorName: TEST_INITIATOR })).status).toBe(0x0207);
    // Target names compare case-insensitively.
    const upper = await client();
    expect(
      (await upper.login({ initiatorName: TEST_INITIATOR, targetName: TEST_TARGET.toUpperCase() })).status,
    ).toBe(0);
  });

  it('answers SendTargets in a discovery session and marks data keys irrelevant', async () => {
    t = await startTestTarget();
    const c = await client();
    const result = await c.login({
      initiatorName: TEST_INITIATOR,
      sessionType: 'Discovery',
      keys: [
        ['MaxBurstLength', '262144'],
        ['HeaderDigest', 'None'],
      ],
    });
    expect(result.status).toBe(0);
    expect(result.keys.get('MaxBurstLength')).toBe('Irrelevant');
    expect(result.keys.has('TargetPortalGroupTag')).toBe(false);
    const bhs = Buffer.alloc(48);
    bhs[0] = Op.TEXT_REQUEST;
    bhs[1] = 0x80;
    bhs.writeUInt32BE(0x77, 16);
    bhs.writeUInt32BE(0xffffffff, 20);
    bhs.writeUInt32BE(c.cmdSn++, 24);
    c.send(bhs, serializeKeys([['SendTargets', 'All']]));
    const reply = await c.next();
    expect(opcodeOf(reply.bhs)).toBe(Op.TEXT_RESPONSE);
    expect(reply.bhs.readUInt32BE(16)).toBe(0x77);
    expect(parseKeys(reply.data).pairs).toEqual([
      ['TargetName', TEST_TARGET],
      ['TargetAddress', `127.0.0.1:${t.target.port},1`],
    ]);
  });

  it('closes connections that never finish logging in', async () => {
    t = await startTestTarget({ loginTimeoutMs: 100 });
    const c = await client();
    await c.closedByTarget(2000);
  });

  it('refuses a connection that tries to join an existing session', async () => {
    t = await startTestTarget();
    const first = await client();
    const { tsih } = await first.login({ initiatorName: TEST_INITIATOR, targetName: TEST_TARGET });
    const second = await client();
    const bhs = Buffer.alloc(48);
    bhs[0] = Op.LOGIN_REQUEST | 0x40;
    bhs[1] = 0x87;
    Buffer.from([0x80, 0, 0, 0, 0, 1]).copy(bhs, 8);
    bhs.writeUInt16BE(tsih, 14);
    second.send(
      bhs,
      serializeKeys([
        ['InitiatorName', TEST_INITIATOR],
        ['TargetName', TEST_TARGET],
      ]),
    );
    expect((await second.next()).bhs.readUInt16BE(36)).toBe(0x0206);
  });
});
