import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** Records the controller alone writes (docs/architecture.md, "One writer per field"). */
const CONTROLLER_OWNED = ['keys.libraries.', 'keys.libraryStatus.', 'keys.dataplane'];
const WRITE = /\b(put|update|create|casPut|delete|deletePrefix)\(\s*$/;

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(full)));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

/**
 * The nodeagent does node-local work only: it may read a library's spec and the data-plane
 * record, never write them or a library's status. A write names its key as the first argument
 * of put/update/create/delete (or of a transaction's), which this looks for in every source file.
 */
describe('the nodeagent writes no controller-owned record', () => {
  it('has no put, update, create or delete of a library spec, library status or the data plane', async () => {
    const offenders: string[] = [];
    for (const file of await sources(import.meta.dirname)) {
      const text = await fs.readFile(file, 'utf8');
      for (const owned of CONTROLLER_OWNED) {
        for (let at = text.indexOf(owned); at >= 0; at = text.indexOf(owned, at + 1)) {
          if (WRITE.test(text.slice(Math.max(0, at - 40), at)))
            offenders.push(`${path.relative(import.meta.dirname, file)}: ${owned} at offset ${at}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});
