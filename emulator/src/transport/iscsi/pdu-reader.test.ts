import { describe, expect, it } from 'vitest';
import { crc32c, digestBytes } from './crc32c.js';
import { FramingError, PduReader } from './pdu-reader.js';

function pdu(data: Buffer, ahsWords = 0): Buffer {
  const bhs = Buffer.alloc(48);
  bhs[0] = 0x01;
  bhs[4] = ahsWords;
  bhs.writeUIntBE(data.length, 5, 3);
  const pad = Buffer.alloc((4 - (data.length & 3)) & 3);
  return Buffer.concat([bhs, Buffer.alloc(ahsWords * 4, 0xaa), data, pad]);
}

describe('PduReader', () => {
  it('reassembles PDUs fed one byte at a time', () => {
    const reader = new PduReader(1 << 20);
    const wire = Buffer.concat([
      pdu(Buffer.from('hello')),
      pdu(Buffer.alloc(0), 2),
      pdu(Buffer.from('abcd')),
    ]);
    const out = [];
    for (const byte of wire) {
      reader.push(Buffer.from([byte]));
      for (let p = reader.next(); p; p = reader.next()) out.push(p);
    }
    expect(out.map((p) => p.data.toString())).toEqual(['hello', '', 'abcd']);
    expect(out[1]!.ahs?.length).toBe(8);
    expect(reader.bufferedBytes).toBe(0);
  });

  it('slices a data segment out of one chunk without copying', () => {
    const reader = new PduReader(1 << 20);
    const wire = pdu(Buffer.alloc(4096, 7));
    reader.push(wire);
    const p = reader.next()!;
    expect(p.data.buffer).toBe(wire.buffer);
  });

  it('hands a large segment spread over chunks out as slices, and whole on demand', () => {
    const reader = new PduReader(1 << 20);
    const data = Buffer.alloc(200_001);
    for (let i = 0; i < data.length; i++) data[i] = i % 251;
    const wire = pdu(data);
    for (let at = 0; at < wire.length; at += 65536) reader.push(wire.subarray(at, at + 65536));
    const p = reader.next()!;
    expect(p.pieces!.length).toBeGreaterThan(1);
    expect(p.pieces!.every((piece) => piece.buffer === wire.buffer)).toBe(true);
    expect(Buffer.concat([...p.pieces!]).equals(data)).toBe(true);
    expect(p.data.equals(data)).toBe(true);
    expect(reader.bufferedBytes).toBe(0);
  });

  it('checks header and data digests', () => {
    const reader = new PduReader(1 << 20);
    reader.headerDigest = reader.dataDigest = true;
    const data = Buffer.from('xyz');
    const plain = pdu(data);
    const bhs = plain.subarray(0, 48);
    const padded = plain.subarray(48);
    reader.push(Buffer.concat([bhs, digestBytes(crc32c(bhs)), padded, digestBytes(crc32c(padded) ^ 1)]));
    const p = reader.next()!;
    expect(p.data.toString()).toBe('xyz');
    expect(p.dataDigestError).toBe(true);
    reader.push(Buffer.concat([bhs, Buffer.alloc(4)]));
    expect(() => reader.next()).toThrow(FramingError);
  });

  it('refuses data segments above the limit', () => {
    const reader = new PduReader(1024);
    reader.push(pdu(Buffer.alloc(2048)));
    expect(() => reader.next()).toThrow(/exceeds/);
  });
});
