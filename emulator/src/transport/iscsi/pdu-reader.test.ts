import { describe, expect, it } from 'vitest';
import { crc32c, digestBytes } from '../../util/crc32c.js';
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
      reader.push(Buffer.from([byte]), 1);
      for (let p = reader.next(); p; p = reader.next()) out.push(p);
    }
    expect(out.map((p) => p.data.toString())).toEqual(['hello', '', 'abcd']);
    expect(out[1]!.ahs?.length).toBe(8);
    expect(reader.bufferedBytes).toBe(0);
  });

  it('reads the rest of a large data segment straight into the buffer the PDU carries', () => {
    const reader = new PduReader(1 << 20);
    const data = Buffer.alloc(200_001);
    for (let i = 0; i < data.length; i++) data[i] = i % 251;
    const wire = pdu(data);
    reader.push(wire.subarray(0, 10_000));
    expect(reader.next()).toBeUndefined();
    // The next read goes into the segment itself, after the bytes staged with the header.
    const into = reader.readBuffer();
    expect(into.length).toBe(data.length - (10_000 - 48));
    const n = wire.copy(into, 0, 10_000, 150_000);
    reader.received(into, n);
    expect(reader.next()).toBeUndefined();
    reader.push(wire.subarray(150_000));
    const p = reader.next()!;
    expect(p.data.buffer).toBe(into.buffer);
    expect(p.data.equals(data)).toBe(true);
    expect(reader.bufferedBytes).toBe(0);
  });

  it('refuses a read that landed anywhere but where it said', () => {
    const reader = new PduReader(1 << 20);
    reader.push(pdu(Buffer.from('first')).subarray(0, 30));
    const into = reader.readBuffer();
    expect(() => reader.received(into.subarray(1), 8)).toThrow(FramingError);
    expect(() => reader.received(Buffer.alloc(8), 8)).toThrow(FramingError);
  });

  it('says when unparsed bytes pile up', () => {
    const reader = new PduReader(1 << 20);
    const many = Buffer.concat(Array.from({ length: 100 }, () => pdu(Buffer.alloc(2000, 1))));
    reader.push(many);
    expect(reader.backedUp).toBe(true);
    let count = 0;
    while (reader.next()) count++;
    expect(count).toBe(100);
    expect(reader.backedUp).toBe(false);
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
