import { giveBlockBuffer, takeBlockBuffer } from '../../media/block-buffers.js';
import { crc32c } from '../../util/crc32c.js';
import { BHS_LENGTH, type IncomingPdu, dataSegmentLength } from './pdu.js';

/** The byte stream can no longer be trusted; the connection must close (RFC 7143 7.8). */
export class FramingError extends Error {
  readonly code = 'iscsi_framing';
}

/** The most one socket read may bring into the staging area. */
const READ_MAX = 128 * 1024;
/**
 * Unparsed bytes above this mean nobody is taking PDUs (a login step in progress, output
 * backed up): the connection stops reading until they are taken.
 */
const BACKED_UP = 128 * 1024;
/** Room for what is backed up, the read that crossed the line and the next one. */
const STAGING_BYTES = BACKED_UP + 2 * READ_MAX;
/** A segment remainder at least this large is read by the kernel straight into its buffer. */
const DIRECT_READ_MIN = 16 * 1024;
/**
 * What a staging read takes while large segments stream: the next header with room to spare,
 * but little of the segment behind it, which would have to be copied out of staging.
 */
const HEADER_READ = 4096;
/** Most bytes that follow a data segment: up to 3 of padding and a 4-byte data digest. */
const SEGMENT_TRAILER_MAX = 7;
const EMPTY = Buffer.alloc(0);

interface PendingHeader {
  bhs: Buffer;
  ahs: Buffer | undefined;
  dataLength: number;
}

/**
 * Cuts the TCP byte stream into PDUs, choosing where each socket read lands (the socket's
 * `onread` buffer): headers, padding, digests and small segments land in one reused staging
 * area; the rest of a large data segment is read by the kernel straight into the pooled buffer
 * that the SCSI task will hand to the device, so write data is copied once, by the kernel, and
 * nothing is allocated per read. Digests apply from the PDU after the login phase, so the
 * connection flips the flags between two calls to next(): parsing is lazy.
 */
export class PduReader {
  headerDigest = false;
  dataDigest = false;
  private readonly staging = Buffer.allocUnsafe(STAGING_BYTES);
  /** Unparsed bytes are staging[start, end). */
  private start = 0;
  private end = 0;
  private header: PendingHeader | undefined;
  /** The data segment of `header`, filled up to `filled`. */
  private segment: Buffer | undefined;
  private filled = 0;
  /** The last PDU carried a large segment: the next probably does too (write data streaming). */
  private streaming = false;
  /**
   * Where a PDU's data segment should land, asked once its header is parsed (every earlier
   * PDU has been taken by then): a buffer of exactly `dataLength` bytes (a data-out's place
   * in its task's buffer, so the kernel reads write data where the device takes it, with no
   * copy), or undefined for a pooled buffer of its own.
   */
  segmentFor: ((bhs: Buffer, ahs: Buffer | undefined, dataLength: number) => Buffer | undefined) | undefined;

  constructor(public maxDataSegment: number) {}

  /** Bytes received and not yet taken as PDUs. */
  get bufferedBytes(): number {
    return this.end - this.start + this.filled;
  }

  /** Unparsed bytes are piling up: stop reading until next() takes them. */
  get backedUp(): boolean {
    return this.end - this.start > BACKED_UP;
  }

  /** Where the next socket read should land: the open data segment, or the staging area. */
  readBuffer(): Buffer {
    const seg = this.segment;
    if (seg && this.start === this.end && seg.length - this.filled >= DIRECT_READ_MIN) {
      return seg.subarray(this.filled);
    }
    if (this.start === this.end) {
      this.start = this.end = 0;
    } else if (STAGING_BYTES - this.end < READ_MAX) {
      this.staging.copyWithin(0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    return this.staging.subarray(this.end, this.end + this.stagingReadLength());
  }

  /** Bytes the next staging read may take: all it can, unless large segments are streaming. */
  private stagingReadLength(): number {
    if (!this.streaming) return READ_MAX;
    const header = this.header;
    // The rest of the open PDU (a small segment remainder, padding, digest), then a header.
    const rest = header ? header.dataLength - this.filled + SEGMENT_TRAILER_MAX : 0;
    return Math.min(READ_MAX, rest + HEADER_READ);
  }

  /**
   * `n` bytes arrived in `buf`, the buffer readBuffer() handed out last (Node asks for one
   * before every read, so nothing moves in between).
   */
  received(buf: Buffer, n: number): void {
    if (n <= 0) return;
    const seg = this.segment;
    if (seg && buf.buffer === seg.buffer && buf.byteOffset === seg.byteOffset + this.filled) {
      this.filled += n;
      return;
    }
    const at = buf.byteOffset - this.staging.byteOffset;
    if (buf.buffer !== this.staging.buffer || at !== this.end || at + n > STAGING_BYTES) {
      throw new FramingError('a socket read landed outside the buffer the reader handed out');
    }
    this.end += n;
  }

  /** Test and tool helper: feeds bytes as socket reads of at most `chunk` bytes would. */
  push(bytes: Buffer, chunk = READ_MAX): void {
    for (let at = 0; at < bytes.length;) {
      const into = this.readBuffer();
      const n = bytes.copy(into, 0, at, at + Math.min(chunk, into.length));
      this.received(into, n);
      at += n;
    }
  }

  /**
   * The connection is gone: a data segment still arriving will never complete, and its buffer
   * (pooled, or a view into a task's buffer) goes back.
   */
  discard(): void {
    if (this.segment) giveBlockBuffer(this.segment);
    this.segment = undefined;
    this.header = undefined;
    this.filled = 0;
  }

  /** The next complete PDU, or undefined until more bytes arrive. */
  next(): IncomingPdu | undefined {
    if (!this.header && !this.readHeader()) return undefined;
    const { bhs, ahs, dataLength } = this.header!;
    if (dataLength > 0 && this.filled < dataLength) {
      // Staged bytes continue the segment; what is still missing will be read into it.
      this.segment ??= this.segmentFor?.(bhs, ahs, dataLength) ?? takeBlockBuffer(dataLength);
      const n = Math.min(dataLength - this.filled, this.end - this.start);
      this.staging.copy(this.segment, this.filled, this.start, this.start + n);
      this.filled += n;
      this.start += n;
      if (this.filled < dataLength) return undefined;
    }
    const pad = (4 - (dataLength & 3)) & 3;
    const digestLength = dataLength > 0 && this.dataDigest ? 4 : 0;
    if (this.end - this.start < pad + digestLength) return undefined;
    const data = this.segment ?? EMPTY;
    let dataDigestError = false;
    if (digestLength) {
      const padding = this.staging.subarray(this.start, this.start + pad);
      const expected = this.staging.readUInt32LE(this.start + pad);
      dataDigestError = crc32c(padding, crc32c(data)) !== expected;
    }
    this.start += pad + digestLength;
    this.header = undefined;
    this.segment = undefined;
    this.filled = 0;
    return { bhs, ahs, data, dataDigestError };
  }

  private readHeader(): boolean {
    const available = this.end - this.start;
    if (available < BHS_LENGTH) return false;
    const ahsLength = this.staging[this.start + 4]! * 4;
    const headerLength = BHS_LENGTH + ahsLength;
    if (available < headerLength + (this.headerDigest ? 4 : 0)) return false;
    // Copied out: the staging area is reused by later reads.
    const header = Buffer.from(this.staging.subarray(this.start, this.start + headerLength));
    this.start += headerLength;
    if (this.headerDigest) {
      const expected = this.staging.readUInt32LE(this.start);
      this.start += 4;
      if (crc32c(header) !== expected) throw new FramingError('header digest mismatch');
    }
    const bhs = header.subarray(0, BHS_LENGTH);
    const dataLength = dataSegmentLength(bhs);
    if (dataLength > this.maxDataSegment) {
      throw new FramingError(`data segment of ${dataLength} bytes exceeds ${this.maxDataSegment}`);
    }
    this.header = { bhs, ahs: ahsLength ? header.subarray(BHS_LENGTH) : undefined, dataLength };
    this.streaming = dataLength >= DIRECT_READ_MIN;
    return true;
  }
}
