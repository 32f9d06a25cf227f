import { describe, expect, it } from 'vitest';
import { lunOrder } from './lun-layout.js';

describe('lunOrder', () => {
  it('numbers libraries by ascending id, each its changer then its drives', () => {
    const rows = lunOrder([
      { id: 3, drives: [1, 0] },
      { id: 1, drives: [0] },
    ]);
    expect(rows).toEqual([
      { lun: 0, library: 1, kind: 'changer' },
      { lun: 1, library: 1, kind: 'drive', drive: 0 },
      { lun: 2, library: 3, kind: 'changer' },
      { lun: 3, library: 3, kind: 'drive', drive: 0 },
      { lun: 4, library: 3, kind: 'drive', drive: 1 },
    ]);
  });

  it('gives an empty data plane no LUNs', () => {
    expect(lunOrder([])).toEqual([]);
  });
});
