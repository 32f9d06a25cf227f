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
