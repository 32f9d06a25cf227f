/*
 * The few ustar/pax pieces a cartridge tar needs. Written by hand rather than with a tar
 * library so every field is fixed (mtime, owner, mode): the same cartridge always gives the
 * same bytes, and the chunk hashes of two exports can be compared.
 */

export const BLOCK = 512;
/** Largest size the 11-digit octal ustar field holds (8 GiB - 1); bigger files get a pax size. */
export const USTAR_MAX_SIZE = 0o77777777777;

const TYPE_FILE = '0';
const TYPE_PAX = 'x';

/** Fixed metadata of every entry: root-owned 0644 files dated at the epoch. */
const MODE = 0o644;
const OWNER = 'root';

function writeString(h: Buffer, at: number, len: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > len) throw new Error(`tar field "${value}" is longer than ${len} bytes`);
  bytes.copy(h, at);
}

function writeOctal(h: Buffer, at: number, len: number, value: number): void {
  writeString(h, at, len, `${value.toString(8).padStart(len - 1, '0')}\0`);
}

/** A 512-byte ustar header of a regular file or a pax extended header. */
function header(name: string, size: number, type: string): Buffer {
  const h = Buffer.alloc(BLOCK);
  writeString(h, 0, 100, name);
  writeOctal(h, 100, 8, MODE);
  writeOctal(h, 108, 8, 0);
  writeOctal(h, 116, 8, 0);
  writeOctal(h, 124, 12, Math.min(size, USTAR_MAX_SIZE));
  writeOctal(h, 136, 12, 0);
  h.fill(0x20, 148, 156);
  writeString(h, 156, 1, type);
  writeString(h, 257, 6, 'ustar\0');
  writeString(h, 263, 2, '00');
  writeString(h, 265, 32, OWNER);
  writeString(h, 297, 32, OWNER);
  writeOctal(h, 329, 8, 0);
  writeOctal(h, 337, 8, 0);
  writeString(h, 148, 8, `${checksum(h).toString(8).padStart(6, '0')}\0 `);
  return h;
}

function checksum(h: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (h[i] as number);
  return sum;
}

/** Zero bytes that round `size` up to a whole block. */
export function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

/** One pax record "<len> key=value\n", where <len> counts the whole record. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = body.length + 1;
  while (`${len}${body}`.length !== len) len = `${len}${body}`.length;
  return `${len}${body}`;
}

/**
 * The header blocks of a regular file: one ustar block, preceded by a pax header with the
 * exact size when the file is 8 GiB or more (ustar cannot hold that).
 */
export function fileHeader(name: string, size: number): Buffer {
  if (size <= USTAR_MAX_SIZE) return header(name, size, TYPE_FILE);
  const pax = Buffer.from(paxRecord('size', String(size)), 'utf8');
  const paxBlock = Buffer.alloc(pax.length + padding(pax.length));
  pax.copy(paxBlock);
  return Buffer.concat([
    header(`PaxHeaders/${name}`, pax.length, TYPE_PAX),
    paxBlock,
    header(name, size, TYPE_FILE),
  ]);
}

/** Two zero blocks end an archive. */
export const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);

/** A decoded header block. */
export type DecodedHeader =
  | { kind: 'end' }
  | { kind: 'file'; name: string; size: number }
  | { kind: 'pax'; size: number }
  | { kind: 'other'; type: string; name: string };

function readString(h: Buffer, at: number, len: number): string {
  const raw = h.subarray(at, at + len);
  const nul = raw.indexOf(0);
  return raw.subarray(0, nul < 0 ? len : nul).toString('utf8');
}

/** Octal, or GNU base-256 (high bit set) for large values. */
function readNumber(h: Buffer, at: number, len: number): number {
  if (((h[at] as number) & 0x80) !== 0) {
    let v = (h[at] as number) & 0x7f;
    for (let i = 1; i < len; i++) v = v * 256 + (h[at + i] as number);
    return v;
  }
  const text = readString(h, at, len).trim();
  return text ? parseInt(text, 8) : 0;
}

/** Decodes one header block; throws when its checksum is wrong. */
export function decodeHeader(h: Buffer): DecodedHeader {
  if (h.every((b) => b === 0)) return { kind: 'end' };
  const stored = readNumber(h, 148, 8);
  if (stored !== checksum(h)) throw new Error('a tar header has a wrong checksum');
  const type = String.fromCharCode(h[156] as number);
  const prefix = readString(h, 345, 155);
  const name = prefix ? `${prefix}/${readString(h, 0, 100)}` : readString(h, 0, 100);
  const size = readNumber(h, 124, 12);
  if (type === TYPE_FILE || type === '\0') return { kind: 'file', name, size };
  if (type === TYPE_PAX) return { kind: 'pax', size };
  return { kind: 'other', type, name };
}

/** The `size` of pax records, if they carry one. */
export function paxSize(records: Buffer): number | undefined {
  let size: number | undefined;
  for (const line of records.toString('utf8').split('\n')) {
    const m = /^\d+ size=(\d+)$/.exec(line);
    if (m) size = Number(m[1]);
  }
  return size;
}
