import { describe, expect, it } from 'vitest';
import { parseKeys, serializeKeys, TextFormatError } from './text-keys.js';

describe('text keys', () => {
  it('round-trips pairs in order', () => {
    const pairs = [
      ['InitiatorName', 'iqn.2024-01.test:host'],
      ['SessionType', 'Normal'],
      ['HeaderDigest', 'CRC32C,None'],
    ] as const;
    const { pairs: parsed, rest } = parseKeys(serializeKeys(pairs));
    expect(parsed).toEqual(pairs);
    expect(rest.length).toBe(0);
  });

  it('keeps an unterminated tail for a continuation PDU', () => {
    const { pairs, rest } = parseKeys(Buffer.from('A=1\0B=par'));
    expect(pairs).toEqual([['A', '1']]);
    expect(rest.toString()).toBe('B=par');
  });

  it('allows empty values and skips padding NULs', () => {
    expect(parseKeys(Buffer.from('SendTargets=\0\0\0')).pairs).toEqual([['SendTargets', '']]);
  });

  it('rejects a pair without a key', () => {
    expect(() => parseKeys(Buffer.from('=x\0'))).toThrow(TextFormatError);
  });
});
