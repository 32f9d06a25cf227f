import { LTO_GENERATIONS } from '@vtl/api/base';

/** What one LTO generation looks like on the wire (REPORT DENSITY SUPPORT, mode header, MAM). */
export interface LtoFormat {
  gen: number;
  /** SCSI density code (SSC primary density code). */
  density: number;
  /** IBM medium type of the mode parameter header for a data cartridge of this generation. */
  mediumType: number;
  /** REPORT DENSITY SUPPORT density name and description. */
  densityName: string;
  description: string;
  bitsPerMm: number;
  tracks: number;
  capacityMb: number;
}

const FORMAT_DETAILS: Record<number, Omit<LtoFormat, 'gen' | 'density' | 'capacityMb'>> = {
  3: { mediumType: 0x38, densityName: 'U-316', description: 'Ultrium 3/16T', bitsPerMm: 9638, tracks: 704 },
  4: { mediumType: 0x48, densityName: 'U-416', description: 'Ultrium 4/16T', bitsPerMm: 13250, tracks: 896 },
  5: { mediumType: 0x58, densityName: 'U-516', description: 'Ultrium 5/16T', bitsPerMm: 15142, tracks: 1280 },
  6: { mediumType: 0x68, densityName: 'U-616', description: 'Ultrium 6/16T', bitsPerMm: 15143, tracks: 2176 },
  7: { mediumType: 0x78, densityName: 'U-732', description: 'Ultrium 7/32T', bitsPerMm: 19094, tracks: 3584 },
  8: { mediumType: 0x88, densityName: 'U-832', description: 'Ultrium 8/32T', bitsPerMm: 20668, tracks: 6656 },
  9: { mediumType: 0x98, densityName: 'U-932', description: 'Ultrium 9/32T', bitsPerMm: 23600, tracks: 8960 },
  // Recording figures of LTO-10 are not in the references followed here: plausible values.
  10: {
    mediumType: 0xa8,
    densityName: 'U-A32',
    description: 'Ultrium 10/32T',
    bitsPerMm: 27000,
    tracks: 14336,
  },
};

/** Drive firmware levels reported as INQUIRY revision, one plausible level per generation. */
const REVISIONS: Record<number, string> = {
  3: '93GP',
  4: 'C7QJ',
  5: 'E6R3',
  6: 'J451',
  7: 'M9G0',
  8: 'N4Q0',
  9: 'R3F1',
  10: 'S1B0',
};

export function ltoFormat(gen: number): LtoFormat | undefined {
  const g = LTO_GENERATIONS.find((x) => x.gen === gen);
  const details = FORMAT_DETAILS[gen];
  if (!g || !details) return undefined;
  return { gen, density: g.density, capacityMb: g.capacityMb, ...details };
}

/** What a drive may do with a cartridge of some generation. */
export type MediumAccess = 'read-write' | 'read-only' | 'none';

/**
 * The LTO compatibility rules: a drive writes its own and the previous generation and reads
 * one more back (LTO-8 reads LTO-6, LTO-9 reads LTO-7, as the appliance's contract states;
 * IBM's own LTO-8 and LTO-9 drives dropped that read-only generation). LTO-10 broke with
 * that: it reads and writes LTO-10 media only. Anything else is an incompatible medium.
 */
export function mediumAccess(driveGen: number, mediumGen: number): MediumAccess {
  const back = driveGen - mediumGen;
  if (driveGen >= 10) return back === 0 ? 'read-write' : 'none';
  if (back === 0 || back === 1) return 'read-write';
  if (back === 2) return 'read-only';
  return 'none';
}

/** An IBM ULT3580 drive model: TD<n> full height or HH<n> half height. */
export interface DrivePersonality {
  vendor: string;
  product: string;
  revision: string;
  gen: number;
  halfHeight: boolean;
  /** Generations the drive reads, newest first (REPORT DENSITY SUPPORT order). */
  readable: LtoFormat[];
  native: LtoFormat;
  /** Largest block READ/WRITE accept (READ BLOCK LIMITS). */
  maxBlockLength: number;
}

export const MAX_BLOCK_LENGTH = 0x800000;

/** Product ids spell the generation in one character: LTO-10 is `ULT3580-TDA`. */
function productGeneration(code: string): number {
  return code === 'A' ? 10 : Number(code);
}

/** The personality for a product id such as `ULT3580-TD8`; the generation falls back to `gen`. */
export function drivePersonality(product: string, gen: number): DrivePersonality {
  const m = /^ULT3580-(TD|HH)([3-9A])$/.exec(product);
  const driveGen = m ? productGeneration(m[2]!) : gen;
  const native = ltoFormat(driveGen);
  if (!native) throw new Error(`no LTO personality for ${product} (generation ${driveGen})`);
  const readable = [driveGen, driveGen - 1, driveGen - 2]
    .filter((g) => mediumAccess(driveGen, g) !== 'none')
    .map((g) => ltoFormat(g))
    .filter((f): f is LtoFormat => f !== undefined);
  return {
    vendor: 'IBM',
    product: m ? product : `ULT3580-TD${driveGen === 10 ? 'A' : driveGen}`,
    revision: REVISIONS[driveGen] ?? '0000',
    gen: driveGen,
    halfHeight: m?.[1] === 'HH',
    readable,
    native,
    maxBlockLength: MAX_BLOCK_LENGTH,
  };
}
