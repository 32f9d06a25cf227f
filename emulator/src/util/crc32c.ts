import { crc32c as hardwareCrc32c } from '@node-rs/crc32';

/**
 * Continues a CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the iSCSI header and data
 * digest (RFC 7143 13.1) and the checksum of tape blocks. Start with `crc32c(first)`, chain
 * with `crc32c(next, previous)`; the result is the finished value each time. @node-rs/crc32
 * runs the CPU's CRC32 instruction, but calls out of line for every 8 bytes (about 4 GiB/s on
 * the 2-core VM, half its CRC-32): newer cartridge indexes checksum blocks with CRC-32 or XXH3
 * instead (media/checksum.ts), and this covers the iSCSI digests and version 2 and 3 images.
 */
export function crc32c(data: Uint8Array, previous = 0): number {
  return (
    hardwareCrc32c(
      Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.length),
      previous,
    ) >>> 0
  );
}

/** The 4 digest bytes as they go on the wire: least significant byte first. */
export function digestBytes(crc: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32LE(crc >>> 0, 0);
  return out;
}
