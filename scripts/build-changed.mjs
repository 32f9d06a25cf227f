// `npm start`'s build: what changed since the last build, and nothing else, told in one line.
// The packages through `tsc -b` (incremental: a package whose sources and dependencies did not
// change is not rebuilt, which its .tsbuildinfo keeping its mtime shows); the web console (its
// OpenAPI types, type check and vite bundle) only when its sources or the OpenAPI document's
// sources (api/ and apiserver/ output) changed since the fingerprint its last build left in
// console/dist. The tools' own output is kept, and shown on stderr only when a step fails.
// The line is JSON when stdout is not a terminal, like the appliance's log lines that follow.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const stamp = path.join(root, 'console/dist/.build-fingerprint');

/** The workspace packages `tsc -b` builds, by their .tsbuildinfo's mtime (0: not built). */
function tscState() {
  const refs = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8')).references;
  return Object.fromEntries(
    refs.map(({ path: pkg }) => {
      const info = path.join(root, pkg, 'dist/.tsbuildinfo');
      return [pkg, fs.existsSync(info) ? fs.statSync(info).mtimeMs : 0];
    }),
  );
}

/** Every file under `dir` (but `skip`), sorted, for a fingerprint. */
function files(dir, skip = () => false) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => !skip(f))
    .sort();
}

/** What the console's build reads: its own sources and the code that makes the OpenAPI document. */
function consoleFingerprint() {
  const hash = createHash('sha256');
  const inputs = [
    ...files(path.join(root, 'console'), (f) => /\/(dist|node_modules)\/|schema\.gen\.ts$/.test(f)),
    ...files(path.join(root, 'api/dist'), (f) => !f.endsWith('.js')),
    ...files(path.join(root, 'apiserver/dist'), (f) => !f.endsWith('.js')),
  ];
  for (const f of inputs) hash.update(path.relative(root, f)).update('\0').update(fs.readFileSync(f));
  return hash.digest('hex');
}

function run(what, command, args, cwd = root) {
  const bin = path.isAbsolute(command) ? command : path.join(root, 'node_modules/.bin', command);
  const res = spawnSync(bin, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (res.status !== 0) {
    process.stderr.write(res.stdout + res.stderr);
    say(50, `build failed: ${what}`);
    process.exit(res.status ?? 1);
  }
}

function say(level, msg, extra = {}) {
  if (process.stdout.isTTY) process.stdout.write(`${msg}\n`);
  else process.stdout.write(`${JSON.stringify({ level, time: Date.now(), name: 'build', ...extra, msg })}\n`);
}

const started = Date.now();
const before = tscState();
run('tsc -b', 'tsc', ['-b']);
const after = tscState();
const packages = Object.keys(after).filter((pkg) => after[pkg] !== before[pkg]);

const fingerprint = consoleFingerprint();
const consoleBuilt = fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === fingerprint;
if (!consoleBuilt) {
  const dir = path.join(root, 'console');
  run('console: OpenAPI types', process.execPath, ['scripts/gen-api.mjs'], dir);
  run('console: type check', 'tsc', ['-p', 'tsconfig.json'], dir);
  run('console: bundle', 'vite', ['build', '--logLevel', 'error'], dir);
  fs.writeFileSync(stamp, fingerprint);
}

const rebuilt = [...packages, ...(consoleBuilt ? [] : ['console'])];
const ms = Date.now() - started;
say(
  30,
  rebuilt.length === 0
    ? `build up to date: nothing changed since the last build (checked in ${ms} ms)`
    : `built what changed: ${rebuilt.join(', ')} (${ms} ms)`,
  { rebuilt, ms },
);
