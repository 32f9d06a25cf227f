import { z } from 'zod';
import { LTO_GENERATIONS, parseMediaSuffix } from './lto.js';

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
