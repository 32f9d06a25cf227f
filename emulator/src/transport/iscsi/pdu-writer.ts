import type { Socket } from 'node:net';
import { crc32c, digestBytes } from '../../util/crc32c.js';

const PADDING = [Buffer.alloc(0), Buffer.alloc(1), Buffer.alloc(2), Buffer.alloc(3)];

/**
 * Writes PDUs to the socket with padding and digests. Payload buffers are handed to the socket
 * as they are (no copy); `batch` corks the socket so a Data-In sequence leaves in one writev.
 */
export class PduWriter {
  headerDigest = false;
  dataDigest = false;
  private corked = 0;

  constructor(private readonly socket: Socket) {}

  /** Queues one PDU; `onSent` runs once the socket has taken the data segment (not on failure to queue). */
  send(bhs: Buffer, data?: Buffer, onSent?: () => void): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    const own = this.corked === 0;
    if (own) this.socket.cork();
    this.socket.write(bhs);
    if (this.headerDigest) this.socket.write(digestBytes(crc32c(bhs)));
    if (data && data.length > 0) {
      this.socket.write(data, onSent);
      const pad = PADDING[(4 - (data.length & 3)) & 3]!;
      if (pad.length) this.socket.write(pad);
      if (this.dataDigest) this.socket.write(digestBytes(crc32c(pad, crc32c(data))));
    }
    if (own) this.socket.uncork();
  }

  /** Sends everything `fn` sends in one corked write. */
  batch(fn: () => void): void {
    this.corked++;
    this.socket.cork();
    try {
      fn();
    } finally {
      this.corked--;
      this.socket.uncork();
    }
  }

  /** Bytes queued in user space; the connection stops reading above a threshold. */
  get backlog(): number {
    return this.socket.writableLength;
  }
}
