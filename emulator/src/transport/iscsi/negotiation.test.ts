import { describe, expect, it } from 'vitest';
import { DEFAULT_TARGET_LIMITS, Negotiator, rfcDefaults } from './negotiation.js';

const answers = (n: Negotiator, pairs: Array<[string, string]>) => new Map(n.respond(pairs));

describe('operational key negotiation', () => {
  it('keeps RFC 7143 defaults for keys nobody offers', () => {
    const n = new Negotiator(DEFAULT_TARGET_LIMITS, false);
    expect(answers(n, [])).toEqual(new Map([['MaxRecvDataSegmentLength', '262144']]));
    expect(n.result()).toEqual(rfcDefaults());
  });

  it('applies min, max, AND and OR result functions', () => {
    const n = new Negotiator(
      { ...DEFAULT_TARGET_LIMITS, maxBurstLength: 65536, firstBurstLength: 131072 },
      false,
    );
    const a = answers(n, [
      ['MaxBurstLength', '262144'],
      ['FirstBurstLength', '262144'],
      ['DefaultTime2Wait', '1'],
      ['DefaultTime2Retain', '60'],
      ['ImmediateData', 'No'],
      ['InitialR2T', 'Yes'],
      ['DataPDUInOrder', 'No'],
    ]);
    expect(a.get('MaxBurstLength')).toBe('65536');
    expect(a.get('FirstBurstLength')).toBe('131072');
    expect(a.get('DefaultTime2Wait')).toBe('2');
    expect(a.get('DefaultTime2Retain')).toBe('0');
    expect(a.get('ImmediateData')).toBe('No');
    expect(a.get('InitialR2T')).toBe('Yes');
    expect(a.get('DataPDUInOrder')).toBe('Yes');
    // FirstBurstLength never exceeds MaxBurstLength in the outcome.
    expect(n.result()).toMatchObject({
      maxBurstLength: 65536,
      firstBurstLength: 65536,
      immediateData: false,
      initialR2T: true,
    });
  });

  it('records the initiator MaxRecvDataSegmentLength without answering it', () => {
    const n = new Negotiator(DEFAULT_TARGET_LIMITS, false);
    n.respond([['MaxRecvDataSegmentLength', '0x2000']]);
    const second = n.respond([['MaxRecvDataSegmentLength', '1048576']]);
    expect(second).toEqual([]);
    expect(n.result().initiatorMaxRecvDataSegmentLength).toBe(1048576);
  });

  it('picks the first digest the initiator lists that is implemented', () => {
    const n = new Negotiator(DEFAULT_TARGET_LIMITS, false);
    const a = answers(n, [
      ['HeaderDigest', 'CRC32C,None'],
      ['DataDigest', 'Adler32,None'],
    ]);
    expect([a.get('HeaderDigest'), a.get('DataDigest')]).toEqual(['CRC32C', 'None']);
    expect(
      answers(new Negotiator(DEFAULT_TARGET_LIMITS, false), [['HeaderDigest', 'MD5']]).get('HeaderDigest'),
    ).toBe('Reject');
  });

  it('rejects out-of-range values and answers unknown keys', () => {
    const a = answers(new Negotiator(DEFAULT_TARGET_LIMITS, false), [
      ['MaxBurstLength', '100'],
      ['InitialR2T', 'Maybe'],
      ['X-vendor.key', '1'],
    ]);
    expect([a.get('MaxBurstLength'), a.get('InitialR2T'), a.get('X-vendor.key')]).toEqual([
      'Reject',
      'Reject',
      'NotUnderstood',
    ]);
  });
});
