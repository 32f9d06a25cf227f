import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { modulesLoadedBy } from '@vtl/store/testing';

/**
 * Modules only some appliances use are loaded on first use (issue 13's idle memory): the offsite
 * engine's package index (the S3 client, zstd and the codec workers: 20-45 MB of a process's
 * private memory) on the first remote op (test, listing, catalog rebuild, recover), and the YAML
 * parser (some 9 MB) on the first GitOps parse.
 */
describe('the controller loads what only some appliances use when it first needs it', () => {
  it('loading every built module but the entry script loads no S3 client, engine index or YAML parser', async () => {
    const loaded = await modulesLoadedBy(path.resolve(import.meta.dirname, '..'), ['main.js']);
    expect(loaded.some((u) => u.includes('/controller/dist/'))).toBe(true);
    expect(loaded.some((u) => u.includes('/gitops/dist/parse.js'))).toBe(true);
    const bad = loaded.filter((u) =>
      /\/node_modules\/(@aws-sdk|yaml)\/|\/offsite\/dist\/(index|remote)\.js$/.test(u),
    );
    expect(bad).toEqual([]);
  }, 90_000);
});
