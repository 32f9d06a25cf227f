import { describe, expect, it } from 'vitest';
import { MODELS, driveGeneration, findDriveModel, findLibraryVariant } from './models.js';

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

  it('recognises frames it cannot create', () => {
    expect(findLibraryVariant('3576-MTL')?.variant.creatable).toBe(false);
    expect(findLibraryVariant('NOPE')).toBeUndefined();
  });
});
