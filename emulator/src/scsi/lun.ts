/**
 * The 8-byte SAM LUN structure. LUNs below 256 use peripheral device addressing (byte 1),
 * larger ones flat space addressing (method 01b), which is what initiators send for them.
 */
export function encodeLun(lun: number, out: Buffer = Buffer.alloc(8), offset = 0): Buffer {
  out.fill(0, offset, offset + 8);
  if (lun < 256) {
    out[offset + 1] = lun;
  } else {
    out[offset] = 0x40 | ((lun >> 8) & 0x3f);
    out[offset + 1] = lun & 0xff;
  }
  return out;
}

/**
 * Decodes the first level of a LUN structure. Peripheral addressing with a non-zero bus byte is
 * read like flat addressing because libiscsi encodes LUNs >= 256 that way.
 */
export function decodeLun(buf: Buffer, offset = 0): number {
  const method = buf[offset]! >> 6;
  if (method === 0 || method === 1) return ((buf[offset]! & 0x3f) << 8) | buf[offset + 1]!;
  // Logical unit and extended addressing never name a LUN this target serves.
  return -1;
}
