import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * Every module (file: and node: URLs) that loading a built package's modules loads,
 * transitively: a resolve hook registered on the loading thread records them, in a fresh Node
 * process. Test files and test helpers are left out; `skip` names entry scripts that start a process when imported (relative to dist/);
 * tests use the list to check what a process takes in at start (module boundaries, lazy loads).
 */
export async function modulesLoadedBy(pkgDir: string, skip: string[]): Promise<string[]> {
  const modules = (await fs.readdir(path.join(pkgDir, 'dist'), { recursive: true }))
    // Test files and test helpers (test/, testing/ folders) are not part of the process.
    .filter((f) => f.endsWith('.js') && !f.endsWith('.test.js') && !/(^|\/)test(ing)?\//.test(f))
    .filter((f) => !skip.includes(f))
    .map((f) => path.join(pkgDir, 'dist', f));
  const script = `
    import { registerHooks } from 'node:module';
    const urls = [];
    registerHooks({
      resolve(specifier, context, next) {
        const r = next(specifier, context);
        urls.push(r.url);
        return r;
      },
    });
    for (const m of ${JSON.stringify(modules)}) await import(m);
    // Some modules start timers when loaded: exit once the list is out.
    process.stdout.write(urls.join('\\n') + '\\n', () => process.exit(0));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: pkgDir,
    timeout: 60_000,
    maxBuffer: 64 << 20,
  });
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('file:') || l.startsWith('node:'))
    .map((u) => u.replace(/\\/g, '/'));
}
