import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { modulesLoadedBy } from '@vtl/store/testing';

/**
 * The offsite engine's package index brings the S3 client, zstd and the codec workers (some
 * 20-45 MB of a process's private memory: issue 13's idle memory). The controller loads it on its
 * first remote op (test, listing, catalog rebuild, recover), not at start.
 */
describe('the controller loads the offsite engine only when it first needs it', () => {
  it('loading every built module but the entry script loads no S3 client and no engine index', async () => {
    const loaded = await modulesLoadedBy(path.resolve(import.meta.dirname, '..'), ['main.js']);
    expect(loaded.some((u) => u.includes('/controller/dist/'))).toBe(true);
    const bad = loaded.filter((u) =>
      /\/node_modules\/@aws-sdk\/|\/offsite\/dist\/(index|remote)\.js$/.test(u),
    );
    expect(bad).toEqual([]);
  }, 90_000);
});
