import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { modulesLoadedBy } from '@vtl/store/testing';

/**
 * The apiserver validates, records desired state and operations, and composes views: it talks to
 * etcd only (issue 14, docs/architecture.md). S3 work is the controller's (controller/src/ops),
 * the emulator and the pool disks are the nodeagent's. These checks fail when the apiserver
 * package takes in the S3 client, the emulator's control client, or node:fs for pool work.
 */
const pkgDir = path.resolve(import.meta.dirname, '..');
const srcDir = path.join(pkgDir, 'src');

/** Module specifiers the apiserver may never import, with where that work belongs. */
const FORBIDDEN: Array<[RegExp, string]> = [
  [/^@aws-sdk\//, 'the S3 client: remote work is a controller op (controller/src/ops)'],
  [/^@vtl\/offsite(\/|$)/, 'the offsite engine (S3): remote work is a controller op (controller/src/ops)'],
  [/^@vtl\/emulator(\/|$)/, "the emulator's control client: the nodeagent talks to the emulator"],
];

/**
 * Files that may read the local filesystem, and why; none of it is pool work (pool paths are
 * checked on their node: nodeagent/src/pool/pool-path.ts).
 */
const FS_ALLOWED: Record<string, string> = {
  'tls.ts': "the apiserver's own HTTPS certificate and key",
  'services/users.ts': 'the initial admin password file in the state dir',
  'services/license.ts': 'the machine identity files',
  'services/bundle-redaction.ts': "the support bundle's redaction of its own log files",
  'services/support-bundle.ts': "the processes' log files for the support bundle",
  'plugins/console.ts': "the console's static files",
  'services/system-update.ts':
    'a signed release bundle staged in the state dir for the updater (docs/updates.md)',
  'services/update-upload.ts': 'the uploaded release bundle streamed to the state dir, deleted when refused',
  'test/test-app.ts': 'a test helper (state dir of the test app)',
};
/** What pool work looks like in a file that reads the filesystem. */
const POOL_WORK = /\b(pool\.path|media_dir|PoolSpec|checkPoolPath|realpath)\b/;

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(full)));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

/** Every module specifier a file imports or re-exports, statically or dynamically. */
function specifiers(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s*['"]([^'"]+)['"]/g))
    found.add(m[1] as string);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) found.add(m[1] as string);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.add(m[1] as string);
  return [...found];
}

describe('the apiserver talks to etcd only', () => {
  it('no source file imports the S3 client, the offsite engine or the emulator control client', async () => {
    const offenders: string[] = [];
    for (const file of await sources(srcDir)) {
      const rel = path.relative(srcDir, file);
      for (const spec of specifiers(await fs.readFile(file, 'utf8')))
        for (const [pattern, why] of FORBIDDEN)
          if (pattern.test(spec)) offenders.push(`${rel}: ${spec} (${why})`);
    }
    expect(offenders).toEqual([]);
  });

  it('only the listed files read the filesystem, and none of them does pool work', async () => {
    const offenders: string[] = [];
    for (const file of await sources(srcDir)) {
      const rel = path.relative(srcDir, file);
      const text = await fs.readFile(file, 'utf8');
      if (!specifiers(text).some((s) => /^(node:)?fs(\/promises)?$/.test(s))) continue;
      if (!(rel in FS_ALLOWED))
        offenders.push(`${rel} imports node:fs: pool or disk work belongs on the node (nodeagent)`);
      else if (POOL_WORK.test(text)) offenders.push(`${rel} reads the filesystem and handles pool paths`);
    }
    expect(offenders).toEqual([]);
  });

  it('the package does not depend on them', async () => {
    const pkg = JSON.parse(await fs.readFile(path.join(pkgDir, 'package.json'), 'utf8'));
    const deps = Object.keys(pkg.dependencies ?? {});
    expect(deps.filter((d) => FORBIDDEN.some(([pattern]) => pattern.test(d)))).toEqual([]);
  });

  it('loading the built apiserver loads no S3 client, offsite engine or emulator module', async () => {
    // Every module the built app graph loads, transitively (a workspace package the apiserver
    // imports must not pull S3 in either): every built module but the entry scripts (server.js
    // starts the process, openapi-snapshot.js writes a file); what server.js imports is among them.
    const loaded = await modulesLoadedBy(pkgDir, ['server.js', 'openapi-snapshot.js']);
    expect(loaded.some((u) => u.includes('/apiserver/dist/routes/remotes.js'))).toBe(true);
    const bad = loaded.filter((u) =>
      /\/node_modules\/@aws-sdk\/|\/offsite\/dist\/|\/emulator\/dist\//.test(u),
    );
    expect(bad).toEqual([]);
  }, 90_000);
});
