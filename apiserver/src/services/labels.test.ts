import { describe, expect, it } from 'vitest';
import { nextLabels } from './labels.js';

describe('nextLabels', () => {
  it('starts at 001 for an unused prefix', () => {
    expect(nextLabels('ABC', 'L8', new Set(), 2)).toEqual(['ABC001L8', 'ABC002L8']);
  });

  it('continues after the highest sequence in use, whatever its suffix', () => {
    const used = new Set(['ABC001', 'ABC007', 'XYZ100']);
    expect(nextLabels('ABC', 'L9', used, 1)).toEqual(['ABC008L9']);
  });

  it('fills gaps once the sequence reaches 999', () => {
    const used = new Set(['ABC999', 'ABC001']);
    expect(nextLabels('ABC', 'L8', used, 2)).toEqual(['ABC002L8', 'ABC003L8']);
  });

  it('refuses when the prefix is exhausted', () => {
    const used = new Set(Array.from({ length: 999 }, (_, i) => `ABC${String(i + 1).padStart(3, '0')}`));
    expect(() => nextLabels('ABC', 'L8', used, 1)).toThrow(/unused labels/);
  });
});
