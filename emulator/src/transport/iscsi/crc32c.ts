/**
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the iSCSI header and data digest
 * (RFC 7143 13.1). Slicing-by-8 tables: data digests run over every payload byte, so the
 * byte-at-a-time loop would cap throughput well below the disk.
 */
const POLY = 0x82f63b78;
const TABLES: Uint32Array[] = buildTables();

function buildTables(): Uint32Array[] {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256));
  const t0 = tables[0]!;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t0[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = t0[n]!;
    for (let t = 1; t < 8; t++) {
      c = (c >>> 8) ^ t0[c & 0xff]!;
      tables[t]![n] = c >>> 0;
    }
  }
  return tables;
}

const [T0, T1, T2, T3, T4, T5, T6, T7] = TABLES as [
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
  Uint32Array,
];

/**
 * Continues a CRC32C over `data`. Start with `crc32c(first)`, chain with
 * `crc32c(next, previous)`; the result is the finished value each time.
 */
export function crc32c(data: Uint8Array, previous = 0): number {
  let crc = ~previous >>> 0;
  let i = 0;
  const end8 = data.length - (data.length % 8);
  for (; i < end8; i += 8) {
    const lo = (crc ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))) >>> 0;
    crc =
      T7[lo & 0xff]! ^
      T6[(lo >>> 8) & 0xff]! ^
      T5[(lo >>> 16) & 0xff]! ^
      T4[lo >>> 24]! ^
      T3[data[i + 4]!]! ^
      T2[data[i + 5]!]! ^
      T1[data[i + 6]!]! ^
      T0[data[i + 7]!]!;
  }
  for (; i < data.length; i++) crc = (crc >>> 8) ^ T0[(crc ^ data[i]!) & 0xff]!;
  return ~crc >>> 0;
}

/** The 4 digest bytes as they go on the wire: least significant byte first. */
export function digestBytes(crc: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32LE(crc >>> 0, 0);
  return out;
}
