import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { QUIET_FOR_MS } from './idle-gc.js';
import { childTuning } from './memory-tuning.js';

const run = promisify(execFile);

describe('childTuning', () => {
  it('loads the idle collection in every child, and through NODE_OPTIONS in the nodeagent (for its emulator)', () => {
    for (const name of ['apiserver', 'controller'] as const)
      expect(
        childTuning(name, undefined).execArgv.some(
          (a) => a.startsWith('--import=') && a.endsWith('/idle-gc.js'),
        ),
      ).toBe(true);
    const nodeagent = childTuning('nodeagent', '--enable-source-maps');
    expect(nodeagent.env.NODE_OPTIONS).toMatch(/^--enable-source-maps --import=file:.*\/idle-gc\.js$/);
    expect(childTuning('nodeagent', undefined).env.NODE_OPTIONS).toMatch(/^--import=file:/);
  });

  it('bounds the malloc arenas of every child, the nodeagent included (its emulator drops the thresholds)', () => {
    for (const name of ['apiserver', 'controller', 'nodeagent'] as const)
      expect(childTuning(name, undefined).env).toMatchObject({
        MALLOC_ARENA_MAX: '2',
        MALLOC_MMAP_THRESHOLD_: '131072',
      });
  });

  it("the idle collection gives a burst's garbage back once the process is quiet", async () => {
    // A child that allocates 80 MB, drops it, idles, and reports its heap before and after: the
    // collection runs QUIET_FOR_MS after the first 2 s interval that saw the burst.
    const script = `
      let junk = []; for (let i = 0; i < 300000; i++) junk.push({ a: i, b: 'x'.repeat(50) + i });
      const before = process.memoryUsage().heapTotal; junk = null;
      setTimeout(() => console.log(JSON.stringify({ before, after: process.memoryUsage().heapTotal })), ${QUIET_FOR_MS + 4_000});
    `;
    // The test runs memory-tuning.ts from its sources; the launcher runs it from dist/, beside
    // the compiled idle-gc.js (npx tsc -b first).
    const execArgv = childTuning('apiserver', undefined).execArgv.map((a) =>
      a.replace('/appliance/src/idle-gc.js', '/appliance/dist/idle-gc.js'),
    );
    // From a file: a script given with -e keeps its top-level bindings reachable.
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-idle-gc-'));
    const file = path.join(dir, 'burst.mjs');
    await fs.writeFile(file, script);
    const { stdout } = await run(process.execPath, [...execArgv, file]).finally(() =>
      fs.rm(dir, { recursive: true, force: true }),
    );
    const { before, after } = JSON.parse(stdout) as { before: number; after: number };
    expect(before).toBeGreaterThan(60 * 2 ** 20);
    expect(after).toBeLessThan(before / 3);
  }, 30_000);
});
