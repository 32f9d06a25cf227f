import { describe, expect, it } from 'vitest';
import { CARTRIDGE_LABEL } from './identifiers.js';
import { MODELS, driveGeneration, findDriveModel, findLibraryVariant } from './models.js';
import { mediaSuffix, parseMediaSuffix } from './lto.js';

describe('models catalog', () => {
  it('offers exactly the two creatable IBM frames with their drive limits', () => {
    const creatable = MODELS.libraries.flatMap((m) =>
      m.creatable ? m.variants.filter((v) => v.creatable).map((v) => [v.product, m.max_drives]) : [],
    );
    expect(creatable).toEqual([
      ['3573-TL', 4],
      ['03584L32', 12],
    ]);
  });

  it('lists LTO-3 to LTO-9 drives with density, suffix and native capacity', () => {
    const td = [3, 4, 5, 6, 7, 8, 9].map((g) => findDriveModel(`ULT3580-TD${g}`));
    expect(td.map((d) => d?.suffix)).toEqual(['L3', 'L4', 'L5', 'L6', 'L7', 'L8', 'L9']);
    expect(td.map((d) => d?.density)).toEqual(['0x44', '0x46', '0x58', '0x5A', '0x5C', '0x5E', '0x60']);
    expect(findDriveModel('ULT3580-HH9')?.capacity_mb).toBe(18_000_000);
    expect(driveGeneration(findDriveModel('ULT3580-TD5')!)).toBe(5);
  });

  it('lists LTO-10 as ULT3580-TDA/HHA: density 0x62, 30 TB, LA media', () => {
    const ten = findDriveModel('ULT3580-TDA');
    expect(ten).toMatchObject({ density: '0x62', suffix: 'LA', capacity_mb: 30_000_000 });
    expect(findDriveModel('ULT3580-HHA')?.suffix).toBe('LA');
    expect(driveGeneration(ten!)).toBe(10);
  });

  it('knows the data and WORM media identifiers of each generation', () => {
    expect(parseMediaSuffix('L8')).toEqual({ gen: 8, worm: false });
    expect(parseMediaSuffix('LY')).toEqual({ gen: 8, worm: true });
    expect(parseMediaSuffix('LT')).toEqual({ gen: 3, worm: true });
    expect(parseMediaSuffix('LA')).toEqual({ gen: 10, worm: false });
    expect(parseMediaSuffix('L2')).toBeUndefined();
    expect(mediaSuffix(9, true)).toBe('LZ');
    expect(mediaSuffix(10, true)).toBeUndefined();
    expect(CARTRIDGE_LABEL.test('ABC123LA')).toBe(true);
    expect(CARTRIDGE_LABEL.test('ABC123LZ')).toBe(true);
    expect(CARTRIDGE_LABEL.test('ABC123LB')).toBe(false);
  });

  it('recognises frames it cannot create', () => {
    expect(findLibraryVariant('3576-MTL')?.variant.creatable).toBe(false);
    expect(findLibraryVariant('NOPE')).toBeUndefined();
  });
});
