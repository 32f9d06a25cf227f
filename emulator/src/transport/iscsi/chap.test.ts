import { describe, expect, it } from 'vitest';
import { ChapExchange, chapResponse, decodeBinary } from './chap.js';

describe('CHAP building blocks', () => {
  it('decodes hex and base64 binary values and refuses anything else', () => {
    expect(decodeBinary('0x0a0B')).toEqual(Buffer.from([0x0a, 0x0b]));
    expect(decodeBinary('0XabC')).toEqual(Buffer.from([0x0a, 0xbc]));
    expect(decodeBinary('0bAQID')).toEqual(Buffer.from([1, 2, 3]));
    for (const bad of ['', '0x', '0xzz', '1234', '0b', '0bA', '0b!!!!', 'abc'])
      expect(decodeBinary(bad)).toBe(undefined);
  });

  it('computes MD5(identifier, secret, challenge) as RFC 1994 defines it', () => {
    // Reference value from Python: hashlib.md5(bytes([1]) + b'secret12chars' + bytes(range(16))).
    const challenge = Buffer.from([...Array(16).keys()]);
    expect(chapResponse(1, 'secret12chars', challenge).toString('hex')).toBe(
      'bb622a912f2f1c96044bb41c295f1bfa',
    );
  });

  it('issues a fresh 16-byte challenge every exchange', () => {
    const challenges = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const step = new ChapExchange({ username: 'u', secret: 'secret12chars' }).step([['CHAP_A', '7,5']]);
      if (step.failure !== undefined) throw new Error(step.failure);
      const reply = new Map(step.reply);
      expect(reply.get('CHAP_A')).toBe('5');
      expect(Number(reply.get('CHAP_I'))).toBeLessThan(256);
      expect(decodeBinary(reply.get('CHAP_C')!)).toHaveLength(16);
      challenges.add(reply.get('CHAP_C')!);
    }
    expect(challenges.size).toBe(20);
  });
});
