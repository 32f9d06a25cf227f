import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md's package map is the rule of what may import what: each package's
 * declared @vtl dependencies are the ones its row names (those "in tests" as devDependencies),
 * and its sources import no @vtl package it does not declare (outside tests and test helpers,
 * none it declares for tests only).
 */
const root = path.resolve(import.meta.dirname, '../..');
const workspaces = (
  JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { workspaces: string[] }
).workspaces;

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
const manifest = (w: string) =>
  JSON.parse(fs.readFileSync(path.join(root, w, 'package.json'), 'utf8')) as Manifest;
const vtl = (deps: Record<string, string> | undefined) =>
  Object.keys(deps ?? {})
    .filter((d) => d.startsWith('@vtl/'))
    .map((d) => d.slice('@vtl/'.length))
    .sort();

/** The rows of the map: package → what it may import, and what only its tests may; undefined: any. */
function packageMap(): Map<string, { deps: string[]; testDeps: string[] } | undefined> {
  const doc = fs.readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf('| Package | For | May import');
  const rows = doc.slice(start).split('\n\n')[0]!.split('\n').slice(2);
  const map = new Map<string, { deps: string[]; testDeps: string[] } | undefined>();
  for (const row of rows) {
    const cells = row.split(' | ');
    const name = /`([a-z0-9-]+)`/.exec(cells[0]!)![1]!;
    const may = cells.at(-1)!.replace(/\s*\|$/, '');
    if (may === 'any') {
      map.set(name, undefined);
      continue;
    }
    const tests = /\(([^)]*) in tests\)/.exec(may)?.[1];
    const list = (text: string) =>
      text
        .split(',')
        .map((d) => d.trim())
        .filter((d) => d && d !== 'none')
        .sort();
    map.set(name, { deps: list(may.replace(/\(.*\)/, '')), testDeps: tests ? list(tests) : [] });
  }
  return map;
}

/** The @vtl packages a package's sources import, apart for production code and for tests. */
function importsOf(w: string): { code: Set<string>; tests: Set<string> } {
  const code = new Set<string>();
  const tests = new Set<string>();
  const dir = path.join(root, w, 'src');
  if (!fs.existsSync(dir)) return { code, tests };
  for (const f of fs.readdirSync(dir, { recursive: true }) as string[]) {
    if (!/\.tsx?$/.test(f)) continue;
    const isTest = /\.test\.tsx?$/.test(f) || /(^|\/)(test|testing)\/|(^|\/)test-[^/]*$/.test(f);
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'@vtl\/([a-z0-9-]+)/g))
      (isTest ? tests : code).add(m[1]!);
  }
  return { code, tests };
}

describe('the package map (docs/architecture.md)', () => {
  const map = packageMap();

  it('has a row for every workspace', () => {
    expect([...map.keys()].sort()).toEqual([...workspaces].sort());
  });

  it.each(workspaces)('%s declares the @vtl dependencies its row names, and imports no other', (w) => {
    const row = map.get(w);
    if (!row) return; // e2e: any
    const m = manifest(w);
    expect({ deps: vtl(m.dependencies), testDeps: vtl(m.devDependencies) }).toEqual(row);
    const { code, tests } = importsOf(w);
    code.delete(w);
    tests.delete(w);
    expect([...code].filter((d) => !row.deps.includes(d))).toEqual([]);
    expect([...tests].filter((d) => !row.deps.includes(d) && !row.testDeps.includes(d))).toEqual([]);
  });
});
