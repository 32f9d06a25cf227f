/**
 * The stream protocol between the TCMU handler front end (native/vtl-tcmu.c, which maps the
 * kernel's ring) and the emulator: one connection per backstore, a hello naming its
 * dev_config, then commands answered strictly in order. Integers are big-endian.
 *
 *   hello    "VTLTCMU1" u16 len, dev_config
 *   command  u32 frame_len, u16 cmd_id, u8 cdb_len, u8 flags (1: data-out follows),
 *            u32 buffer_len, cdb, data-out
 *   answer   u32 frame_len, u16 cmd_id, u8 status, u8 sense_len, u32 data_len, sense, data-in
 */
export const HELLO_MAGIC = Buffer.from('VTLTCMU1');
/** Largest frame accepted: the kernel's data area is bounded (max_data_area_mb) well below it. */
export const MAX_FRAME = 64 << 20;

export interface TcmuCommandFrame {
  id: number;
  cdb: Buffer;
  /** The kernel's buffer length: data-out bytes or the host's allocation for data-in. */
  bufferLength: number;
  dataOut?: Buffer;
}

export interface TcmuAnswer {
  id: number;
  status: number;
  sense?: Buffer;
  dataIn?: Buffer;
}

/** Incremental parser: feed it socket chunks, it yields the hello once, then commands. */
export class TcmuFrameReader {
  private chunks: Buffer[] = [];
  private length = 0;
  private helloDone = false;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  private peek(n: number): Buffer | undefined {
    if (this.length < n) return undefined;
    if (this.chunks[0]!.length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    const head = this.peek(n)!;
    const rest = this.chunks[0]!.subarray(n);
    if (rest.length > 0) this.chunks[0] = rest;
    else this.chunks.shift();
    this.length -= n;
    return head;
  }

  /** The hello's dev_config, once it has fully arrived. Throws on a stream that is not ours. */
  hello(): string | undefined {
    if (this.helloDone) throw new Error('hello already read');
    const head = this.peek(10);
    if (!head) return undefined;
    if (!head.subarray(0, 8).equals(HELLO_MAGIC)) throw new Error('not a vtl-tcmu stream (bad hello)');
    const len = head.readUInt16BE(8);
    if (this.length < 10 + len) return undefined;
    const config = this.take(10 + len)
      .subarray(10)
      .toString('utf8');
    this.helloDone = true;
    return config;
  }

  /** The next complete command, or undefined until more bytes arrive. */
  next(): TcmuCommandFrame | undefined {
    const lenBytes = this.peek(4);
    if (!lenBytes) return undefined;
    const frameLength = lenBytes.readUInt32BE(0);
    if (frameLength < 8 || frameLength > MAX_FRAME)
      throw new Error(`bad command frame length ${frameLength}`);
    if (this.length < 4 + frameLength) return undefined;
    // Copied out of the socket's chunks: devices may keep data-out beyond this call.
    const frame = Buffer.from(this.take(4 + frameLength).subarray(4));
    const cdbLength = frame[2]!;
    const withData = (frame[3]! & 1) === 1;
    if (8 + cdbLength > frame.length) throw new Error('command frame shorter than its CDB');
    return {
      id: frame.readUInt16BE(0),
      cdb: frame.subarray(8, 8 + cdbLength),
      bufferLength: frame.readUInt32BE(4),
      dataOut: withData ? frame.subarray(8 + cdbLength) : undefined,
    };
  }
}

/** One answer frame (header and sense; the data-in travels as its own buffer, uncopied). */
export function encodeAnswer(a: TcmuAnswer): Buffer[] {
  const sense = a.sense?.subarray(0, 255) ?? Buffer.alloc(0);
  const data = a.dataIn ?? Buffer.alloc(0);
  const head = Buffer.alloc(12);
  head.writeUInt32BE(8 + sense.length + data.length, 0);
  head.writeUInt16BE(a.id, 4);
  head[6] = a.status;
  head[7] = sense.length;
  head.writeUInt32BE(data.length, 8);
  return data.length > 0 ? [head, sense, data] : [head, sense];
}

/** The hello a front end sends (tests play the front end with it). */
export function encodeHello(config: string): Buffer {
  const c = Buffer.from(config);
  const len = Buffer.alloc(2);
  len.writeUInt16BE(c.length);
  return Buffer.concat([HELLO_MAGIC, len, c]);
}

/** A command frame as the front end sends it (tests). */
export function encodeCommand(f: TcmuCommandFrame): Buffer {
  const data = f.dataOut ?? Buffer.alloc(0);
  const head = Buffer.alloc(12);
  head.writeUInt32BE(8 + f.cdb.length + data.length, 0);
  head.writeUInt16BE(f.id, 4);
  head[6] = f.cdb.length;
  head[7] = f.dataOut ? 1 : 0;
  head.writeUInt32BE(f.bufferLength, 8);
  return Buffer.concat([head, f.cdb, data]);
}
