import { describe, expect, it } from 'vitest';
import { SenseKey } from './constants.js';
import { buildSense, parseSense, Sense, ScsiError } from './sense.js';

describe('fixed-format sense data', () => {
  it('encodes key, ASC/ASCQ and the 18-byte layout', () => {
    const s = buildSense(Sense.invalidOpcode());
    expect(s.length).toBe(18);
    expect(s[0]).toBe(0x70);
    expect(s[2]).toBe(SenseKey.ILLEGAL_REQUEST);
    expect(s[7]).toBe(10);
    expect([s[12], s[13]]).toEqual([0x20, 0x00]);
    expect(s[15]).toBe(0);
  });

  it('points INVALID FIELD IN CDB at the byte and bit', () => {
    const s = buildSense(Sense.invalidFieldInCdb(4, 1));
    expect(s[15]).toBe(0x80 | 0x40 | 0x08 | 1);
    expect(s.readUInt16BE(16)).toBe(4);
    expect(parseSense(s).fieldPointer).toEqual({ inCdb: true, byte: 4, bit: 1 });
    const whole = buildSense(Sense.invalidFieldInParameterList(12));
    expect(whole[15]).toBe(0x80);
    expect(parseSense(whole).fieldPointer).toEqual({ inCdb: false, byte: 12 });
  });

  it('sets filemark, EOM and ILI with a signed information field', () => {
    const s = buildSense({
      key: SenseKey.NO_SENSE,
      asc: 0,
      ascq: 1,
      filemark: true,
      eom: true,
      ili: true,
      information: -512,
    });
    expect(s[0]).toBe(0xf0);
    expect(s[2]).toBe(0xe0);
    expect(s.readInt32BE(3)).toBe(-512);
    expect(parseSense(s)).toMatchObject({ filemark: true, eom: true, ili: true, information: -512 });
  });

  it('appends vendor bytes and reports progress', () => {
    const s = buildSense({
      ...Sense.notReady([0x04, 0x04]),
      progress: 0x8000,
      vendor: Buffer.alloc(6, 0xee),
    });
    expect(s.length).toBe(24);
    expect(s[7]).toBe(16);
    expect(s[15]).toBe(0x80);
    expect(s.readUInt16BE(16)).toBe(0x8000);
  });

  it('throws as an error carrying the built sense', () => {
    const err = new ScsiError(Sense.mediumNotPresent());
    expect(err.status).toBe(2);
    expect(parseSense(err.sense!)).toMatchObject({ key: 2, asc: 0x3a });
    expect(err.message).toContain('0x3a/0x00');
  });
});
