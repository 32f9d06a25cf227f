import { crc32c } from './crc32c.js';
import { BHS_LENGTH, type IncomingPdu, dataSegmentLength } from './pdu.js';

/** The byte stream can no longer be trusted; the connection must close (RFC 7143 7.8). */
export class FramingError extends Error {
  readonly code = 'iscsi_framing';
}

interface PendingHeader {
  bhs: Buffer;
  ahs: Buffer | undefined;
  dataLength: number;
}

/**
 * Cuts the TCP byte stream into PDUs. Headers are sliced out of the received chunks without
 * copying; a data segment is copied only when it spans chunks. Digests apply from the PDU after
 * the login phase, so the connection flips the flags between two calls to next().
 */
export class PduReader {
  headerDigest = false;
  dataDigest = false;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private header: PendingHeader | undefined;

  constructor(public maxDataSegment: number) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  get bufferedBytes(): number {
    return this.buffered;
  }

  /** The next complete PDU, or undefined until more bytes arrive. */
  next(): IncomingPdu | undefined {
    if (!this.header && !this.readHeader()) return undefined;
    const { bhs, ahs, dataLength } = this.header!;
    const padded = (dataLength + 3) & ~3;
    const digestLength = dataLength > 0 && this.dataDigest ? 4 : 0;
    if (this.buffered < padded + digestLength) return undefined;
    this.header = undefined;
    const segment = padded > 0 ? this.take(padded) : Buffer.alloc(0);
    let dataDigestError = false;
    if (digestLength) {
      const expected = this.take(4).readUInt32LE(0);
      dataDigestError = crc32c(segment) !== expected;
    }
    return { bhs, ahs, data: segment.subarray(0, dataLength), dataDigestError };
  }

  private readHeader(): boolean {
    if (this.buffered < BHS_LENGTH) return false;
    const first = this.peek(BHS_LENGTH);
    const ahsLength = first[4]! * 4;
    const headerLength = BHS_LENGTH + ahsLength + (this.headerDigest ? 4 : 0);
    if (this.buffered < headerLength) return false;
    const header = this.take(BHS_LENGTH + ahsLength);
    if (this.headerDigest) {
      const expected = this.take(4).readUInt32LE(0);
      if (crc32c(header) !== expected) throw new FramingError('header digest mismatch');
    }
    const bhs = header.subarray(0, BHS_LENGTH);
    const dataLength = dataSegmentLength(bhs);
    if (dataLength > this.maxDataSegment) {
      throw new FramingError(`data segment of ${dataLength} bytes exceeds ${this.maxDataSegment}`);
    }
    this.header = { bhs, ahs: ahsLength ? header.subarray(BHS_LENGTH) : undefined, dataLength };
    return true;
  }

  private peek(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= n) return first.subarray(0, n);
    return this.gather(n, false);
  }

  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.buffered -= n;
      return out;
    }
    return this.gather(n, true);
  }

  /** Copies n bytes that span chunks into one buffer; consumes them when asked. */
  private gather(n: number, consume: boolean): Buffer {
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    let i = 0;
    while (filled < n) {
      const chunk = this.chunks[i]!;
      const part = Math.min(chunk.length, n - filled);
      chunk.copy(out, filled, 0, part);
      filled += part;
      if (!consume) {
        i++;
      } else if (part === chunk.length) {
        this.chunks.shift();
      } else {
        this.chunks[0] = chunk.subarray(part);
      }
    }
    if (consume) this.buffered -= n;
    return out;
  }
}
