import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeImportCycles } from './testing/import-cycles.js';

const root = path.resolve(import.meta.dirname, '../..');
const workspaces = (
  JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { workspaces: string[] }
).workspaces;

/**
 * No module of a package loads itself back through its imports: in such a cycle, whichever
 * module is entered first sees the others' exports still undefined (the emulator's tape drive,
 * its SSC commands and its mode pages were one, issue 32).
 */
describe('runtime import cycles', () => {
  it.each(workspaces.filter((w) => fs.existsSync(path.join(root, w, 'src'))))('%s/src has none', (w) => {
    expect(runtimeImportCycles(path.join(root, w, 'src'))).toEqual([]);
  });

  it('finds a cycle of value imports and leaves one closed by a type import alone', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vtl-cycles-'));
    try {
      const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, name), text);
      write('a.ts', "import { b } from './b.js';\nexport const a = () => b;\n");
      write('b.ts', "import { c } from './c.js';\nexport const b = c;\n");
      write('c.ts', "import { a } from './a.js';\nexport const c = () => a;\n");
      write('d.ts', "import type { E } from './e.js';\nexport const d = 1;\nexport type D = E;\n");
      write('e.ts', "import { d } from './d.js';\nexport type E = typeof d;\n");
      expect(runtimeImportCycles(dir)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
