import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** Routes give their input schemas to Fastify (plugins/zod-provider.ts) instead of parsing by hand. */

describe('route input validation', () => {
  it('comes from the Fastify schemas, not from parse() in the handlers', async () => {
    const dir = import.meta.dirname;
    const offenders: string[] = [];
    for (const file of await readdir(dir)) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
      const text = await readFile(path.join(dir, file), 'utf8');
      if (/import \{[^}]*\bparse\b[^}]*\} from '\.\.\/plugins\/validate\.js'/.test(text))
        offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
