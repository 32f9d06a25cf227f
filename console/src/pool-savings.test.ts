import { describe, expect, it } from 'vitest';
import { savingsText } from './pool-savings';

const pool = {
  name: 'fast',
  fs_used_bytes: 0,
  fs_total_bytes: 1e12,
  logical_bytes: 400e9,
  phys_est_bytes: 100e9,
  dedup_ratio: 2.5,
  compress_ratio: 1.6,
};

describe("the overview's pool savings", () => {
  it('gives a btrfs pool its written and on-disk bytes, the share saved and both ratios', () => {
    expect(savingsText({ ...pool, engine: 'btrfs' })).toBe(
      'btrfs: 400 GB written by hosts, 100 GB on disk (75 % saved); dedup 2.50×, compression 1.60×.',
    );
    expect(savingsText({ ...pool, engine: 'btrfs', logical_bytes: 0, phys_est_bytes: 0 })).toMatch(
      /\(0 % saved\)/,
    );
  });

  it('says a directory pool is a plain directory that neither dedups nor compresses', () => {
    expect(savingsText({ ...pool, engine: 'directory' })).toBe(
      'Plain directory: no dedup or compression. 400 GB written by hosts.',
    );
  });
});
