import { POOLED_MIN, takeBlockBuffer } from '../../media/block-buffers.js';
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
 * copying; a data segment is copied only when it spans chunks (into a pooled block buffer). Digests apply from the PDU after
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
    if (digestLength === 0 && dataLength >= POOLED_MIN && this.chunks[0]!.length < padded) {
      return piecesPdu(bhs, ahs, this.slices(padded, dataLength));
    }
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

  /** Consumes n bytes as slices of the chunks (no copy); the slices cover the first `keep` bytes. */
  private slices(n: number, keep: number): Buffer[] {
    const out: Buffer[] = [];
    for (let left = n; left > 0;) {
      const chunk = this.chunks[0]!;
      const part = Math.min(chunk.length, left);
      const kept = Math.min(part, Math.max(0, keep - (n - left)));
      if (kept > 0) out.push(chunk.subarray(0, kept));
      if (part === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(part);
      left -= part;
    }
    this.buffered -= n;
    return out;
  }

  /**
   * Copies n bytes that span chunks into one buffer; consumes them when asked. Block-sized
   * data segments land in a pooled buffer that the SCSI task gives back once it is done.
   */
  private gather(n: number, consume: boolean): Buffer {
    const out = takeBlockBuffer(n);
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

/** A PDU whose data segment stays in pieces until someone asks for it whole. */
function piecesPdu(bhs: Buffer, ahs: Buffer | undefined, pieces: Buffer[]): IncomingPdu {
  let whole: Buffer | undefined;
  return {
    bhs,
    ahs,
    pieces,
    dataDigestError: false,
    get data(): Buffer {
      if (!whole) {
        whole = takeBlockBuffer(pieces.reduce((n, p) => n + p.length, 0));
        let at = 0;
        for (const p of pieces) at += p.copy(whole, at);
      }
      return whole;
    },
  };
}
