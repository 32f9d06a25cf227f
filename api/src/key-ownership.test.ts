import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { KEY_OWNERS, keys } from './keys.js';
import { importClosure } from './testing/import-closure.js';
import { findKeyWrites, workspaceSources, type KeyWrite } from './testing/key-writes.js';

/**
 * The one-writer rule as a test (issue 32): every etcd write of a key family sits in the module
 * KEY_OWNERS (api/src/keys.ts) names for it, or in one it lists under `also`; every key written
 * can be followed back to keys.ts; and docs/architecture.md's owner table is the one generated
 * from KEY_OWNERS. Run with UPDATE_OWNER_TABLE=1 to rewrite that table after changing KEY_OWNERS.
 */
const root = path.resolve(import.meta.dirname, '../..');
const DOC = path.join(root, 'docs/architecture.md');
const BEGIN =
  '<!-- owner table: generated from KEY_OWNERS in api/src/keys.ts by api/src/key-ownership.test.ts -->';
const END = '<!-- end of owner table -->';

type Family = keyof typeof keys;

function ownerTable(): string {
  const rows = (Object.keys(KEY_OWNERS) as Family[]).map((family) => {
    const o = KEY_OWNERS[family];
    const k = keys[family];
    const key =
      typeof k === 'string'
        ? k
        : typeof k === 'function'
          ? (k as (name: string) => string)('<name>')
          : k.prefix;
    const also = Object.entries(o.also ?? {})
      .map(([m, why]) => `\`${m}\`: ${why}`)
      .join('; ');
    return `| \`${family}\` | \`${key.replace(/^\/vtl\//, '')}\` | ${o.process} | \`${o.module}\` | ${also} |`;
  });
  return [
    '| Family (`keys.`) | Key | Process | Owner module | Also written by, by design (what, and why) |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

describe('one owner per key family (KEY_OWNERS)', () => {
  let writes: KeyWrite[];
  beforeAll(() => {
    writes = findKeyWrites(root);
  }, 120_000);

  it('finds the writes (the analysis follows keys through variables and helpers)', () => {
    const at = (family: string, file: string) =>
      writes.some((w) => w.families.includes(family) && w.file === file);
    // keys.jobs.one(id) straight in the call; `key` through a const; a family through a parameter.
    expect(at('jobs', 'domain/src/records/jobs.ts')).toBe(true);
    expect(at('ops', 'domain/src/records/ops.ts')).toBe(true);
    expect(at('update', 'updater/src/update-writes.ts')).toBe(true);
    expect(writes.length).toBeGreaterThan(100);
  });

  it('every key written is followed back to keys.ts (or declared: `// writes keys.<family>`)', () => {
    expect(writes.filter((w) => w.families.length === 0).map((w) => `${w.file}:${w.line} ${w.text}`)).toEqual(
      [],
    );
  });

  it('every write of a family is in its owner module or one listed under `also`', () => {
    const outside: string[] = [];
    for (const w of writes)
      for (const family of w.families) {
        const owner = KEY_OWNERS[family as Family];
        if (!owner) outside.push(`${w.file}:${w.line} writes keys.${family}, which KEY_OWNERS does not name`);
        else if (owner.module !== w.file && !(w.file in (owner.also ?? {})))
          outside.push(`${w.file}:${w.line} ${w.method}s keys.${family}, owned by ${owner.module}`);
      }
    expect(outside).toEqual([]);
  });

  it('every module listed under `also` still writes the family (a folded-in writer leaves the list)', () => {
    const stale: string[] = [];
    for (const [family, owner] of Object.entries(KEY_OWNERS))
      for (const module of Object.keys(owner.also ?? {}))
        if (!writes.some((w) => w.file === module && w.families.includes(family)))
          stale.push(`keys.${family}: ${module}`);
    expect(stale).toEqual([]);
  });

  it('the apiserver process runs no write of system/update/: the updater process is its one writer', () => {
    // Not only the apiserver's own files: any module it loads, e.g. from @vtl/updater. Settling an
    // update whose updater is gone is the updater's settle run (updater/src/takeover.ts), a child.
    const apiserver = importClosure(
      root,
      workspaceSources(root).filter((f) => path.relative(root, f).startsWith('apiserver/src/')),
    );
    expect(apiserver.has('updater/src/launch.ts')).toBe(true);
    expect(apiserver.has('domain/src/records/jobs.ts')).toBe(true);
    expect(
      writes
        .filter((w) => w.families.includes('update') && apiserver.has(w.file))
        .map((w) => `${w.file}:${w.line} ${w.text}`),
    ).toEqual([]);
  });

  it("docs/architecture.md's owner table is generated from KEY_OWNERS", () => {
    const doc = fs.readFileSync(DOC, 'utf8');
    const begin = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    expect(begin, `docs/architecture.md has no "${BEGIN}" marker`).toBeGreaterThanOrEqual(0);
    const current = doc.slice(begin + BEGIN.length, end).trim();
    if (process.env.UPDATE_OWNER_TABLE && current !== ownerTable())
      fs.writeFileSync(DOC, `${doc.slice(0, begin + BEGIN.length)}\n${ownerTable()}\n${doc.slice(end)}`);
    else expect(current).toBe(ownerTable());
  });
});
