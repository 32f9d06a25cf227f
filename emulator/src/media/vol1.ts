/**
 * The ANSI X3.27 / ISO 1001 volume label: one 80-byte record of ASCII at the start of the tape.
 *
 *   0-3 "VOL1" | 4-9 volume identifier | 10 accessibility | 11-23 reserved
 *   24-36 implementation identifier | 37-50 owner identifier | 51-78 reserved
 *   79 label-standard version ("4" = ISO 1001:1986 / ANSI X3.27-1987)
 *
 * A full standard-labelled volume goes on with HDR1/HDR2 and a tapemark before the first file;
 * a freshly minted cartridge carries only VOL1 and one filemark: enough for a host to see a
 * labelled volume with this volume id, and every backup product rewrites labels on first use.
 */
export const VOL1_LENGTH = 80;
export const VOL1_VERSION = '4';

export interface Vol1 {
  volumeId: string;
  owner: string;
  version: string;
}

/** Volume identifier of a barcode: its first six characters (the media suffix is not part of it). */
export function volumeIdOf(label: string): string {
  return label.slice(0, 6);
}

function field(text: string, width: number): string {
  return text.slice(0, width).padEnd(width, ' ');
}

export function buildVol1(volumeId: string, owner = ''): Buffer {
  const text =
    'VOL1' +
    field(volumeId, 6) +
    ' ' +
    field('', 13) +
    field('', 13) +
    field(owner, 14) +
    field('', 28) +
    VOL1_VERSION;
  return Buffer.from(text, 'ascii');
}

/** Parses a VOL1 record; undefined when the block is not one (an unlabelled tape). */
export function parseVol1(block: Buffer): Vol1 | undefined {
  if (block.length !== VOL1_LENGTH || block.toString('ascii', 0, 4) !== 'VOL1') return undefined;
  return {
    volumeId: block.toString('ascii', 4, 10).trimEnd(),
    owner: block.toString('ascii', 37, 51).trimEnd(),
    version: block.toString('ascii', 79, 80),
  };
}
