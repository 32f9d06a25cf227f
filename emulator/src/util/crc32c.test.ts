import { describe, expect, it } from 'vitest';
import { crc32c, digestBytes } from './crc32c.js';

describe('crc32c', () => {
  it('matches the standard check value', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  // RFC 3720 appendix B.4 test vectors, given there as the bytes on the wire.
  it.each([
    ['32 zero bytes', Buffer.alloc(32, 0), 'aa36918a'],
    ['32 0xff bytes', Buffer.alloc(32, 0xff), '43aba862'],
    ['32 ascending bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => i)), '4e79dd46'],
    ['32 descending bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i)), '5cdb3f11'],
  ])('%s', (_name, data, wire) => {
    expect(digestBytes(crc32c(data)).toString('hex')).toBe(wire);
  });

  it('matches the RFC 3720 iSCSI read command PDU vector', () => {
    const pdu = Buffer.from(
      '01c00000000000000000000000000000' +
        '14000000000004000000001400000018' +
        '28000000000000000200000000000000',
      'hex',
    );
    expect(digestBytes(crc32c(pdu)).toString('hex')).toBe('563a96d9');
  });

  it('chains over split buffers', () => {
    const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7) & 0xff));
    expect(crc32c(data.subarray(300), crc32c(data.subarray(0, 300)))).toBe(crc32c(data));
  });
});
