import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GitSourceRecord } from '@vtl/gitops';
import { FetchError, fetchRevision } from './git-fetch.js';

const run = promisify(execFile);

describe('fetchRevision (Debian git, a real repository)', () => {
  let dir: string;
  let commit: string;
  const source = (over: Partial<GitSourceRecord> = {}): GitSourceRecord => ({
    name: 's',
    url: `file://${path.join(dir, 'origin')}`,
    branch: 'main',
    path: 'site-a',
    interval_sec: 60,
    prune: true,
    suspended: false,
    credential: 'none',
    created_at: '',
    ...over,
  });

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-gitfetch-'));
    const origin = path.join(dir, 'origin');
    await run('git', ['init', '--quiet', '--initial-branch=main', origin]);
    for (const [file, content] of Object.entries({
      'site-a/pools.yaml': 'kind: TapePool\n',
      'site-a/libs/lib-a.yml': 'kind: VirtualTapeLibrary\n',
      'site-a/notes.txt': 'not a manifest\n',
      'site-b/other.yaml': 'kind: TapePool\n',
    })) {
      await fs.mkdir(path.dirname(path.join(origin, file)), { recursive: true });
      await fs.writeFile(path.join(origin, file), content);
    }
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e',
    };
    await run('git', ['add', '-A'], { cwd: origin, env });
    await run('git', ['commit', '--quiet', '-m', 'one'], { cwd: origin, env });
    commit = (await run('git', ['rev-parse', 'HEAD'], { cwd: origin })).stdout.trim();
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('reads the YAML files under the source path at the branch head, with their paths', async () => {
    const got = await fetchRevision(path.join(dir, 'cache'), source(), undefined);
    expect(got.commit).toBe(commit);
    expect(got.documents).toEqual([
      { file: 'site-a/libs/lib-a.yml', content: 'kind: VirtualTapeLibrary\n' },
      { file: 'site-a/pools.yaml', content: 'kind: TapePool\n' },
    ]);
    // Again, from the kept local repository.
    expect((await fetchRevision(path.join(dir, 'cache'), source(), undefined)).commit).toBe(commit);
  });

  it('says which branch is missing, and removes an SSH key file after use', async () => {
    const cache = path.join(dir, 'cache2');
    await expect(
      fetchRevision(cache, source({ branch: 'nope' }), {
        kind: 'ssh',
        identity: 'KEY',
        knownHosts: undefined,
        from: 'test',
      }),
    ).rejects.toThrow(FetchError);
    await expect(fetchRevision(cache, source({ branch: 'nope' }), undefined)).rejects.toThrow(/nope/);
    await expect(fs.access(path.join(cache, '.ssh-key'))).rejects.toThrow();
  });
});
