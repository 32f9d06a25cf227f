import { constants, crc32, deflateRawSync } from 'node:zlib';

/**
 * gzip (RFC 1952) for the views kept as bytes. A view's last chunk is the part kept between
 * changes of the records (the whole view, or all of /api/status but its `updated_at` head); it is
 * deflated once, the first time a gzip client reads it, and kept beside it for as long as the
 * view keeps that buffer (a change builds a new one). The chunks before it, made per request, go
 * as stored (uncompressed) deflate blocks in the same gzip member: a request costs a header, a
 * trailer and a CRC of its few head bytes, whatever the view's size.
 */

/** Fast deflate: the views are JSON of repeated shapes, level 1 already takes them to a tenth or less. */
const LEVEL = constants.Z_BEST_SPEED;
/** ID1, ID2, CM = deflate, no flags, no MTIME, XFL 0, OS unknown. */
const HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);
/** The largest stored deflate block. */
const STORED_MAX = 0xffff;

interface Deflated {
  /** Raw deflate of the chunk, ending with its final block (a view into `member`). */
  deflate: Buffer;
  crc: number;
  length: number;
  /** The chunk alone as one gzip member: header, `deflate`, trailer (a view read whole). */
  member: Buffer;
}

const deflated = new WeakMap<Buffer, Deflated>();

function deflateOnce(kept: Buffer): Deflated {
  let d = deflated.get(kept);
  if (!d) {
    const raw = deflateRawSync(kept, { level: LEVEL });
    const crc = crc32(kept);
    const member = Buffer.concat([HEADER, raw, trailer(crc, kept.length)]);
    d = {
      deflate: member.subarray(HEADER.length, HEADER.length + raw.length),
      crc,
      length: kept.length,
      member,
    };
    deflated.set(kept, d);
  }
  return d;
}

/** gzip's trailer: CRC-32 and length modulo 2^32 of the content, little-endian. */
function trailer(crc: number, length: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeUInt32LE(crc, 0);
  out.writeUInt32LE(length % 0x1_0000_0000, 4);
  return out;
}

/** Non-final stored blocks of `bytes` (each: header byte 0, LEN and its complement, little-endian). */
function storedBlocks(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += STORED_MAX) {
    const piece = bytes.subarray(at, at + STORED_MAX);
    const head = Buffer.alloc(5);
    head.writeUInt16LE(piece.length, 1);
    head.writeUInt16LE(~piece.length & 0xffff, 3);
    out.push(head, piece);
  }
  return out;
}

/** CRC-32 polynomial, bit-reflected (x^0 is the top bit). */
const POLY = 0xedb88320;

/** a × b modulo the CRC polynomial, both bit-reflected. */
function multiplyModPoly(a: number, b: number): number {
  let product = 0;
  for (let bit = 0x80000000; a !== 0 && bit !== 0; bit >>>= 1) {
    if (a & bit) {
      product ^= b;
      a &= ~bit;
    }
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return product >>> 0;
}

/** x^(2^k) modulo the polynomial, k = 0..31 (x^1 is bit 30 when reflected). */
const X_POW_2K: number[] = [0x40000000];
for (let k = 1; k < 32; k++) X_POW_2K.push(multiplyModPoly(X_POW_2K[k - 1]!, X_POW_2K[k - 1]!));

/**
 * The CRC-32 of A followed by B from crc(A), crc(B) and B's length: crc(A) shifted past B's
 * bits (times x^(8·|B|) modulo the polynomial) plus crc(B). The conditioning of the start value
 * and the final complement cancel out in this form.
 */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  let shift = 0x80000000; // x^0
  // x^(8·lengthB): 8 = 2^3, so walk lengthB's bits from k = 3 on.
  for (let n = lengthB, k = 3; n > 0; n = Math.floor(n / 2), k++)
    if (n % 2) shift = multiplyModPoly(X_POW_2K[k % 32]!, shift);
  return (multiplyModPoly(shift, crcA) ^ crcB) >>> 0;
}

/**
 * One gzip member whose content is `chunks` in order: the last deflated once per buffer, those
 * before it stored. Returned as chunks to write, without copying the kept deflate; a view of
 * one chunk is one buffer, the member kept whole beside it (one write per request).
 */
export function gzipView(chunks: readonly Buffer[]): Buffer[] {
  const kept = deflateOnce(chunks.at(-1) ?? Buffer.alloc(0));
  if (chunks.length <= 1) return [kept.member];
  const heads = chunks.slice(0, -1);
  let crc = 0;
  let length = 0;
  for (const h of heads) {
    crc = crc32(h, crc);
    length += h.length;
  }
  crc = crc32Combine(crc, kept.crc, kept.length);
  return [HEADER, ...heads.flatMap(storedBlocks), kept.deflate, trailer(crc, length + kept.length)];
}

/**
 * Whether an Accept-Encoding header (RFC 9110 12.5.3) takes gzip: `gzip` or `x-gzip` with a
 * nonzero q, or `*` with a nonzero q when gzip is not named.
 */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (!header) return false;
  if (Array.isArray(header)) return parseAcceptsGzip(header.join(','));
  // Clients send the same few strings on every request: each (of a plain length) is parsed once.
  if (header.length > MAX_CACHED_LENGTH) return parseAcceptsGzip(header);
  let known = readAcceptEncoding.get(header);
  if (known === undefined) {
    known = parseAcceptsGzip(header);
    if (readAcceptEncoding.size >= MAX_READ) readAcceptEncoding.clear();
    readAcceptEncoding.set(header, known);
  }
  return known;
}

/** Accept-Encoding values already read, and what each said (at most MAX_READ of them). */
const readAcceptEncoding = new Map<string, boolean>();
const MAX_READ = 256;
const MAX_CACHED_LENGTH = 128;

function parseAcceptsGzip(text: string): boolean {
  let star: boolean | undefined;
  for (const entry of text.split(',')) {
    const [name = '', ...params] = entry.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const accepted = q === undefined || Number(q.slice(2)) > 0;
    if (name === 'gzip' || name === 'x-gzip') return accepted;
    if (name === '*') star = accepted;
  }
  return star === true;
}
