import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { modulesLoadedBy } from '@vtl/store/testing';
import { parseManifests } from './parse.js';

/**
 * The apiserver and the controller import this package's schemas at start; the YAML parser
 * (some 9 MB of a process's memory) comes with the first parse only (issue 13's idle memory).
 */
describe('the YAML parser is loaded by the first parse', () => {
  it("loading every built module of the package but the kube adapter's entry loads no yaml", async () => {
    const loaded = await modulesLoadedBy(path.resolve(import.meta.dirname, '..'), ['kube/main.js']);
    expect(loaded.some((u) => u.includes('/gitops/dist/parse.js'))).toBe(true);
    expect(loaded.filter((u) => u.includes('/node_modules/yaml/'))).toEqual([]);
  }, 90_000);

  it('parses once loaded', () => {
    const parsed = parseManifests([{ file: 'a.yaml', content: 'apiVersion: nope\nkind: Pool\n' }]);
    expect(JSON.stringify(parsed)).toMatch(/apiVersion/);
  });
});
