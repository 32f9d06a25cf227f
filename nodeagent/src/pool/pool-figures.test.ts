import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoNow, PoolSpec } from '@vtl/api';
import { directoryPoolFigures, usage } from './pool-figures.js';

describe('directory pool figures', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-pool-figures-'));
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it('sums the logical and allocated bytes of every file below, sparse ones as allocated', async () => {
    const root = path.join(dir, 'sums');
    await fs.mkdir(path.join(root, 'lib-1', 'AAA001L8'), { recursive: true });
    await fs.mkdir(path.join(root, 'lib-1', 'empty'), { recursive: true });
    await fs.writeFile(path.join(root, 'lib-1', 'inventory.json'), 'x'.repeat(10_000));
    await fs.writeFile(path.join(root, 'lib-1', 'AAA001L8', 'data'), Buffer.alloc(64 * 1024, 1));
    // 8 MiB logical, nothing written: allocates (almost) nothing.
    const sparse = await fs.open(path.join(root, 'lib-1', 'AAA001L8', 'sparse'), 'w');
    await sparse.truncate(8 * 2 ** 20);
    await sparse.close();
    await fs.symlink('/etc/hostname', path.join(root, 'link'));

    let allocated = 0;
    for (const f of ['lib-1/inventory.json', 'lib-1/AAA001L8/data', 'lib-1/AAA001L8/sparse'])
      allocated += (await fs.stat(path.join(root, f))).blocks * 512;
    expect(await usage(root)).toEqual({ logical: 10_000 + 64 * 1024 + 8 * 2 ** 20, allocated });
    expect(allocated).toBeLessThan(2 * 2 ** 20);
    expect(await usage(path.join(dir, 'missing'))).toEqual({ logical: 0, allocated: 0 });

    const figures = await directoryPoolFigures(
      PoolSpec.parse({ id: 1, name: 'p1', node: 'node1', path: root, created_at: isoNow() }),
    );
    expect(figures).toMatchObject({
      logical_bytes: 10_000 + 64 * 1024 + 8 * 2 ** 20,
      phys_est_bytes: allocated,
    });
    expect(figures.compress_ratio).toBeGreaterThan(1);
  });

  it('lets the event loop run while it walks a big pool', async () => {
    const root = path.join(dir, 'big');
    for (let d = 0; d < 40; d++) {
      await fs.mkdir(path.join(root, `C${d}`), { recursive: true });
      await Promise.all(
        Array.from({ length: 50 }, (_, f) => fs.writeFile(path.join(root, `C${d}`, `f${f}`), 'ab')),
      );
    }
    let turns = 0;
    const spin = () => {
      turns++;
      if (!done) setImmediate(spin);
    };
    let done = false;
    setImmediate(spin);
    const figures = await usage(root);
    done = true;
    expect(figures.logical).toBe(40 * 50 * 2);
    // 2,040 entries in slices of 512: the loop got a turn between slices.
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});
