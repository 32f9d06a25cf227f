import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Files that may read process.env though they are no process's config, each with its reason.
 * A process's settings are read in its config.ts (or `<process>-config.ts` for a second process
 * of a workspace: updater-config.ts, emulator-runner-config.ts), so the README's table is
 * complete and a process is configured in one place.
 */
const ALLOWED: Record<string, string> = {
  'crds/src/render-chart.ts':
    'a build tool, not a process of the appliance: hands its environment (PATH, HOME) on to `go build`',
  'controller/src/gitops/git-credentials.ts':
    'hands PATH alone on to the git child it runs with an otherwise empty environment; not a setting',
  'nodeagent/src/dataplane/emulator-env.ts':
    "hands the nodeagent's environment on to its emulator, less two malloc thresholds; not a setting",
};

/** e2e is the test harness (it starts the processes with the environment it sets). */
const NOT_PRODUCT = new Set(['e2e', 'node_modules']);

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') out.push(...(await sources(file)));
    } else if (
      /\.tsx?$/.test(entry.name) &&
      !/\.test\.tsx?$/.test(entry.name) &&
      !entry.name.endsWith('.d.ts')
    )
      out.push(file);
  }
  return out;
}

describe('environment variables', () => {
  it('are read only in the config.ts of the process that uses them', async () => {
    const readers: string[] = [];
    for (const ws of await readdir(ROOT, { withFileTypes: true })) {
      if (!ws.isDirectory() || NOT_PRODUCT.has(ws.name) || ws.name.startsWith('.')) continue;
      const src = path.join(ROOT, ws.name, 'src');
      const files = await sources(src).catch(() => [] as string[]);
      for (const file of files) {
        const rel = path.relative(ROOT, file);
        const base = path.basename(file);
        if (base === 'config.ts' || base.endsWith('-config.ts') || rel in ALLOWED) continue;
        // Test helpers (apiserver/src/test, @vtl/store/testing) build environments for tests.
        if (rel.split(path.sep).some((part) => part === 'test' || part === 'testing')) continue;
        if (/process\.env\b/.test(await readFile(file, 'utf8'))) readers.push(rel);
      }
    }
    expect(readers, 'move these reads into the process config.ts and pass the values in').toEqual([]);
  });

  it('allows only files that still read it', async () => {
    for (const rel of Object.keys(ALLOWED))
      expect(await readFile(path.join(ROOT, rel), 'utf8'), rel).toMatch(/process\.env\b/);
  });
});
