import { z } from 'zod';

/** One LTO generation as the emulator and the catalog know it. */
export interface LtoGeneration {
  gen: number;
  density: number;
  capacityMb: number;
  /** Barcode media identifier of a data cartridge (the label's last two characters). */
  suffix: string;
  /** Media identifier of the generation's WORM cartridge; absent where none is offered here. */
  wormSuffix?: string;
  /** Drive product ids spell the generation with one character: 1-9, then A for 10. */
  productCode: string;
}

/**
 * The LTO generations. Media identifiers follow the LTO/IBM barcode convention: L<n> for data,
 * LT..LZ for the WORM cartridges of LTO-3..LTO-9; LTO-10 takes LA (its WORM identifier is not
 * offered: no WORM LTO-10 cartridge is minted here).
 */
export const LTO_GENERATIONS: readonly LtoGeneration[] = [
  { gen: 3, density: 0x44, capacityMb: 400_000, suffix: 'L3', wormSuffix: 'LT', productCode: '3' },
  { gen: 4, density: 0x46, capacityMb: 800_000, suffix: 'L4', wormSuffix: 'LU', productCode: '4' },
  { gen: 5, density: 0x58, capacityMb: 1_500_000, suffix: 'L5', wormSuffix: 'LV', productCode: '5' },
  { gen: 6, density: 0x5a, capacityMb: 2_500_000, suffix: 'L6', wormSuffix: 'LW', productCode: '6' },
  { gen: 7, density: 0x5c, capacityMb: 6_000_000, suffix: 'L7', wormSuffix: 'LX', productCode: '7' },
  { gen: 8, density: 0x5e, capacityMb: 12_000_000, suffix: 'L8', wormSuffix: 'LY', productCode: '8' },
  { gen: 9, density: 0x60, capacityMb: 18_000_000, suffix: 'L9', wormSuffix: 'LZ', productCode: '9' },
  { gen: 10, density: 0x62, capacityMb: 30_000_000, suffix: 'LA', productCode: 'A' },
];

/** What a barcode's media identifier says: the generation, and whether the cartridge is WORM. */
export function parseMediaSuffix(suffix: string): { gen: number; worm: boolean } | undefined {
  for (const g of LTO_GENERATIONS) {
    if (g.suffix === suffix) return { gen: g.gen, worm: false };
    if (g.wormSuffix === suffix) return { gen: g.gen, worm: true };
  }
  return undefined;
}

/** The media identifier of a generation's data or WORM cartridge; undefined when none exists. */
export function mediaSuffix(gen: number, worm = false): string | undefined {
  const g = LTO_GENERATIONS.find((x) => x.gen === gen);
  return worm ? g?.wormSuffix : g?.suffix;
}

export const LibraryVariant = z.object({
  product: z.string(),
  family: z.string(),
  display: z.string(),
  creatable: z.boolean(),
});

export const LibraryModel = z.object({
  vendor: z.string(),
  display: z.string(),
  variants: z.array(LibraryVariant),
  hostos_compatible: z.boolean(),
  creatable: z.boolean(),
  max_drives: z.number().int(),
});
export type LibraryModel = z.infer<typeof LibraryModel>;

export const DriveModel = z.object({
  product: z.string(),
  vendor: z.string(),
  display: z.string(),
  family: z.string(),
  density: z.string(),
  suffix: z.string(),
  capacity_mb: z.number().int(),
  hostos_compatible: z.boolean(),
});
export type DriveModel = z.infer<typeof DriveModel>;

export const ModelsCatalog = z.object({
  libraries: z.array(LibraryModel),
  drives: z.array(DriveModel),
});
export type ModelsCatalog = z.infer<typeof ModelsCatalog>;

/** Drives of this family fit IBM frames; the HP entries are recognised, not accepted by IBM frames. */
export const IBM_LTO_FAMILY = 'ibm-lto';

const hex = (n: number) => `0x${n.toString(16).toUpperCase().padStart(2, '0')}`;

const ibmDrives: DriveModel[] = LTO_GENERATIONS.flatMap((g) => [
  {
    product: `ULT3580-TD${g.productCode}`,
    vendor: 'IBM',
    display: `IBM LTO-${g.gen} full height`,
    family: IBM_LTO_FAMILY,
    density: hex(g.density),
    suffix: g.suffix,
    capacity_mb: g.capacityMb,
    hostos_compatible: true,
  },
  {
    product: `ULT3580-HH${g.productCode}`,
    vendor: 'IBM',
    display: `IBM LTO-${g.gen} half height`,
    family: IBM_LTO_FAMILY,
    density: hex(g.density),
    suffix: g.suffix,
    capacity_mb: g.capacityMb,
    hostos_compatible: true,
  },
]);

const hpDrives: DriveModel[] = LTO_GENERATIONS.filter((g) => g.gen >= 5).map((g) => ({
  product: `Ultrium ${g.gen}-SCSI`,
  vendor: 'HP',
  display: `HPE LTO-${g.gen}`,
  family: 'hp-lto',
  density: hex(g.density),
  suffix: g.suffix,
  capacity_mb: g.capacityMb,
  hostos_compatible: false,
}));

/** The catalog served by GET /api/models. Only `creatable` frames can be declared. */
export const MODELS: ModelsCatalog = {
  libraries: [
    {
      vendor: 'IBM',
      display: 'IBM TS3100/TS3200',
      variants: [{ product: '3573-TL', family: IBM_LTO_FAMILY, display: 'TS3100/TS3200', creatable: true }],
      hostos_compatible: true,
      creatable: true,
      max_drives: 4,
    },
    {
      vendor: 'IBM',
      display: 'IBM TS3500',
      variants: [
        { product: '03584L32', family: IBM_LTO_FAMILY, display: 'TS3500 L32 base frame', creatable: true },
        {
          product: '03584D32',
          family: IBM_LTO_FAMILY,
          display: 'TS3500 D32 expansion frame',
          creatable: false,
        },
      ],
      hostos_compatible: true,
      creatable: true,
      max_drives: 12,
    },
    {
      vendor: 'IBM',
      display: 'IBM TS3310',
      variants: [{ product: '3576-MTL', family: IBM_LTO_FAMILY, display: 'TS3310', creatable: false }],
      hostos_compatible: true,
      creatable: false,
      max_drives: 18,
    },
    {
      vendor: 'IBM',
      display: 'IBM TS4300',
      variants: [{ product: '3555-L3A', family: IBM_LTO_FAMILY, display: 'TS4300', creatable: false }],
      hostos_compatible: false,
      creatable: false,
      max_drives: 21,
    },
  ],
  drives: [...ibmDrives, ...hpDrives],
};

/** The creatable library variant with this wire id, with its frame, or undefined. */
export function findLibraryVariant(product: string) {
  for (const model of MODELS.libraries) {
    const variant = model.variants.find((v) => v.product === product);
    if (variant) return { model, variant };
  }
  return undefined;
}

export function findDriveModel(product: string): DriveModel | undefined {
  return MODELS.drives.find((d) => d.product === product);
}

/** LTO generation number of a drive model (from its media suffix). */
export function driveGeneration(drive: DriveModel): number {
  return parseMediaSuffix(drive.suffix)?.gen ?? Number.NaN;
}
