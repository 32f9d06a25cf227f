import { constants, crc32, deflateRawSync } from 'node:zlib';

/**
 * gzip (RFC 1952) for the views kept as bytes. A view is a list of chunks; the kept ones (the
 * last chunk, and any marked with keptPart: the parts of /api/status kept between changes of
 * their own inputs) are deflated once each, the first time a gzip client reads them, and the
 * deflate kept beside the buffer for as long as the view keeps that buffer (a change builds a new
 * one). Each is deflated with a sync flush: byte-aligned, non-final blocks, so the deflates of
 * parts kept apart concatenate into one deflate stream, closed by an empty final block. Chunks
 * made per request (the status view's `updated_at` head) go as stored (uncompressed) blocks in
 * the same gzip member: a request costs a header, a trailer and a CRC of its few head bytes,
 * whatever the view's size, and a change of one part deflates that part alone.
 */

/** Fast deflate: the views are JSON of repeated shapes, level 1 already takes them to a tenth or less. */
const LEVEL = constants.Z_BEST_SPEED;
/** ID1, ID2, CM = deflate, no flags, no MTIME, XFL 0, OS unknown. */
const HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final block (fixed Huffman codes, BFINAL set, just the end-of-block code). */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);
/** A part below this deflates with zlib's smallest memory (memLevel 1). */
const SMALL_PART = 16 * 1024;
/** The largest stored deflate block. */
const STORED_MAX = 0xffff;

interface Deflated {
  /** Raw deflate of the chunk in non-final blocks ending byte-aligned (a view into `member`). */
  deflate: Buffer;
  crc: number;
  length: number;
  /** The chunk alone as one gzip member: header, `deflate`, final block, trailer (a view read whole). */
  member: Buffer;
}

const deflated = new WeakMap<Buffer, Deflated>();
/** Chunks kept between changes besides a view's last one: deflated once, not stored per request. */
const keptParts = new WeakSet<Buffer>();

/** Marks a buffer kept between changes, so gzipView deflates it once rather than per request. */
export function keptPart(bytes: Buffer): Buffer {
  keptParts.add(bytes);
  return bytes;
}

/** How many kept chunks were deflated (tests: a small change deflates its part alone). */
export let deflateCount = 0;

function deflateOnce(kept: Buffer): Deflated {
  let d = deflated.get(kept);
  if (!d) {
    deflateCount++;
    const raw = deflateRawSync(kept, {
      level: LEVEL,
      // A small part (the status view's pools and fabrics, a few KB made after every change)
      // with small hash tables: zlib's default ones (some 200 KB allocated and cleared) cost
      // ten times what deflating the part itself does.
      memLevel: kept.length < SMALL_PART ? 1 : 8,
      finishFlush: constants.Z_SYNC_FLUSH,
    });
    const crc = crc32(kept);
    const member = Buffer.concat([HEADER, raw, FINAL_BLOCK, trailer(crc, kept.length)]);
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

/** The final block and gzip's trailer: CRC-32 and length modulo 2^32 of the content, little-endian. */
function trailer(crc: number, length: number, final = false): Buffer {
  const out = Buffer.alloc(final ? 10 : 8);
  const at = final ? FINAL_BLOCK.length : 0;
  if (final) FINAL_BLOCK.copy(out);
  out.writeUInt32LE(crc, at);
  out.writeUInt32LE(length % 0x1_0000_0000, at + 4);
  return out;
}

/** Non-final stored blocks of `bytes` (each: header byte 0, LEN and its complement, little-endian). */
function storedBlocks(bytes: Buffer, out: Buffer[]): void {
  for (let at = 0; at < bytes.length; at += STORED_MAX) {
    const piece = bytes.subarray(at, at + STORED_MAX);
    const head = Buffer.alloc(5);
    head.writeUInt16LE(piece.length, 1);
    head.writeUInt16LE(~piece.length & 0xffff, 3);
    out.push(head, piece);
  }
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

/** x^(8·length) modulo the polynomial: what shifts a CRC past `length` bytes. */
function crcShift(length: number): number {
  let shift = 0x80000000; // x^0
  // 8 = 2^3, so walk length's bits from k = 3 on.
  for (let n = length, k = 3; n > 0; n = Math.floor(n / 2), k++)
    if (n % 2) shift = multiplyModPoly(X_POW_2K[k % 32]!, shift);
  return shift;
}

/**
 * The CRC-32 of A followed by B from crc(A), crc(B) and B's length: crc(A) shifted past B's
 * bits (times x^(8·|B|) modulo the polynomial) plus crc(B). The conditioning of the start value
 * and the final complement cancel out in this form.
 */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multiplyModPoly(crcShift(lengthB), crcA) ^ crcB) >>> 0;
}

/** The kept chunks that end a view, as one: their CRC, length and CRC shift (computed once). */
interface KeptRun {
  chunks: readonly Buffer[];
  crc: number;
  length: number;
  shift: number;
}
/** By the view's last chunk: the run of kept chunks it ends. */
const keptRuns = new WeakMap<Buffer, KeptRun>();

/**
 * The run chunks[from..] of kept chunks, deflated, with its CRC and shift: computed when the run
 * changes (a crc32Combine is some 10 µs; per request, the head's CRC is shifted past the run
 * with one multiplication).
 */
function keptRun(chunks: readonly Buffer[], from: number): KeptRun {
  const last = chunks.at(-1)!;
  const known = keptRuns.get(last);
  if (
    known &&
    known.chunks.length === chunks.length - from &&
    known.chunks.every((c, i) => c === chunks[from + i])
  )
    return known;
  let crc = 0;
  let length = 0;
  for (let i = from; i < chunks.length; i++) {
    const d = deflateOnce(chunks[i]!);
    crc = crc32Combine(crc, d.crc, d.length);
    length += d.length;
  }
  const run = { chunks: chunks.slice(from), crc, length, shift: crcShift(length) };
  keptRuns.set(last, run);
  return run;
}

/**
 * One gzip member whose content is `chunks` in order: the last and those marked keptPart deflated
 * once per buffer, the others stored. Returned as chunks to write, without copying the kept
 * deflates; a view of one chunk is one buffer, the member kept whole beside it (one write per
 * request).
 */
export function gzipView(chunks: readonly Buffer[]): Buffer[] {
  if (chunks.length <= 1) return [deflateOnce(chunks[0] ?? Buffer.alloc(0)).member];
  // The kept chunks that end the view (the last is always kept).
  let from = chunks.length - 1;
  while (from > 0 && keptParts.has(chunks[from - 1]!)) from--;
  const out: Buffer[] = [HEADER];
  let crc = 0;
  let length = 0;
  for (let i = 0; i < from; i++) {
    const c = chunks[i]!;
    if (keptParts.has(c)) {
      const d = deflateOnce(c);
      out.push(d.deflate);
      crc = crc32Combine(crc, d.crc, d.length);
    } else {
      storedBlocks(c, out);
      crc = crc32(c, crc);
    }
    length += c.length;
  }
  const run = keptRun(chunks, from);
  for (let i = from; i < chunks.length; i++) out.push(deflateOnce(chunks[i]!).deflate);
  crc = (multiplyModPoly(run.shift, crc) ^ run.crc) >>> 0;
  out.push(trailer(crc, length + run.length, true));
  return out;
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
