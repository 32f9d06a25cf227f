// Exits 0 when node_modules holds what package-lock.json pins, 1 when `npm ci` should run
// (scripts/start.sh, scripts/test.sh). npm records what it installed in
// node_modules/.package-lock.json; the two are compared by content, not by mtime: a rebase or a
// checkout rewrites package-lock.json without changing it, and an `npm ci` then would wipe
// node_modules under whatever runs from it (other test runs in the same developer tree).
import fs from 'node:fs';
import path from 'node:path';

// The project directory: this repository, or the one named (the test's copies).
const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
const read = (file) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')).packages ?? {};
  } catch {
    return undefined;
  }
};
const locked = read('package-lock.json');
const installed = read('node_modules/.package-lock.json');

/** Why node_modules is not what the lock pins, or undefined when it is. */
function stale() {
  if (!locked) return 'package-lock.json is unreadable';
  if (!installed) return 'node_modules has no record of an install';
  for (const [where, pkg] of Object.entries(locked)) {
    if (where === '') continue; // the root project itself
    const have = installed[where];
    // Optional dependencies of other platforms (esbuild's, for one) are never installed.
    if (!have) {
      if (pkg.optional) continue;
      return `${where} is not installed`;
    }
    if (have.version !== pkg.version) return `${where} is ${have.version}, the lock pins ${pkg.version}`;
  }
  for (const where of Object.keys(installed))
    if (!(where in locked)) return `${where} is installed but no longer in the lock`;
  return undefined;
}

const why = stale();
if (why) {
  console.error(`npm dependencies out of date: ${why}`);
  process.exit(1);
}
