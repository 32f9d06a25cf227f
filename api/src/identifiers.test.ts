import { describe, expect, it } from 'vitest';
import { Label } from './label.js';
import { formatLabel, isoNow, normalizeWwpn, randomDriveSerial, randomSerial } from './identifiers.js';

describe('normalizeWwpn', () => {
  it('accepts the three input forms and returns naa. with lower-case hex', () => {
    expect(normalizeWwpn('naa.21000024FF314C48')).toBe('naa.21000024ff314c48');
    expect(normalizeWwpn('21:00:00:24:ff:31:4c:48')).toBe('naa.21000024ff314c48');
    expect(normalizeWwpn('21000024ff314c48')).toBe('naa.21000024ff314c48');
  });

  it('refuses malformed input', () => {
    for (const bad of [
      '',
      'naa.123',
      '21:00:00:24:ff:31:4c',
      '21:00:00:24:ff:31:4c:4g',
      'iqn.2020-01.x:y',
      '21000024ff314c4800',
    ])
      expect(normalizeWwpn(bad), bad).toBeUndefined();
  });
});

describe('labels and serials', () => {
  it('formats prefix, three-digit sequence and media suffix', () => {
    expect(formatLabel('ABC', 7, 'L8')).toBe('ABC007L8');
  });

  it('normalises a barcode to upper case and checks its shape', () => {
    expect(Label.parse(' abc123l9 ')).toBe('ABC123L9');
    expect(Label.safeParse('ABC12L9').success).toBe(false);
    expect(Label.safeParse('ABC123X9').success).toBe(false);
  });

  it('makes serials of the requested shape', () => {
    expect(randomSerial('VL', 8)).toMatch(/^VL[A-Z0-9]{8}$/);
    expect(randomDriveSerial()).toMatch(/^[1-9]\d{9}$/);
  });

  it('prints timestamps without milliseconds', () => {
    expect(isoNow(new Date('2026-01-02T03:04:05.678Z'))).toBe('2026-01-02T03:04:05Z');
  });
});
