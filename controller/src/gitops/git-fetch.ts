import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { GitSourceRecord, ManifestFile } from '@vtl/gitops';
import { explainGitFailure, gitEnv, type GitCredential } from './git-credentials.js';

/** The most one git command may take (a fetch of a slow server). */
const GIT_TIMEOUT_MS = 120_000;
/** The manifests of one revision, at most (the apply body limit is 8 MB). */
const MAX_FILES = 1000;
const MAX_BYTES = 6 * 1024 * 1024;

export interface FetchedRevision {
  commit: string;
  documents: ManifestFile[];
  /** An SSH host key accepted on first use by this fetch (ssh's own words: host and key type). */
  acceptedHostKey?: string;
}

export class FetchError extends Error {}

function gitOut(
  dir: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cred?: GitCredential,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd: dir, env, timeout: GIT_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          // stderr names the problem (unreachable host, unknown branch); it never holds the token.
          const why = stderr.trim().split('\n').filter(Boolean).slice(-2).join(' ') || err.message;
          const meaning = explainGitFailure(stderr, cred);
          reject(
            new FetchError(meaning ? `${meaning} (git ${args[0]}: ${why})` : `git ${args[0]} failed: ${why}`),
          );
        } else resolve({ stdout, stderr });
      },
    );
  });
}

const git = async (dir: string, args: string[], env: NodeJS.ProcessEnv) =>
  (await gitOut(dir, args, env)).stdout;

const isManifest = (f: string) => /\.ya?ml$/i.test(f);

/**
 * Fetches the branch's head into a local repository (`dir`, kept between polls so a fetch moves
 * only new objects) and reads every *.yaml / *.yml under `path` at that commit, without a checkout.
 */
export async function fetchRevision(
  dir: string,
  source: GitSourceRecord,
  cred: GitCredential | undefined,
): Promise<FetchedRevision> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const { env, cleanup, tofuKnownHosts } = await gitEnv(dir, cred, source.ca_cert);
  try {
    await fs.access(path.join(dir, 'HEAD')).catch(() => git(dir, ['init', '--quiet', '--bare'], env));
    const fetched = await gitOut(
      dir,
      [
        'fetch',
        '--quiet',
        '--depth',
        '1',
        '--no-tags',
        source.url,
        `+refs/heads/${source.branch}:refs/vtl/head`,
      ],
      env,
      cred,
    );
    const accepted = tofuKnownHosts
      ? /Permanently added (.+?) to the list of known hosts/.exec(fetched.stderr)?.[1]
      : undefined;
    const commit = (await git(dir, ['rev-parse', 'refs/vtl/head'], env)).trim();
    const sub = source.path.replace(/^\.?\/*/, '').replace(/\/+$/, '');
    const listed = await git(
      dir,
      ['ls-tree', '-r', '-z', '--name-only', commit, ...(sub ? ['--', sub] : [])],
      env,
    );
    const files = listed
      .split('\0')
      .filter((f) => f !== '' && isManifest(f))
      .sort();
    if (files.length > MAX_FILES)
      throw new FetchError(`${files.length} manifest files under "${source.path}"; at most ${MAX_FILES}.`);
    const documents: ManifestFile[] = [];
    let bytes = 0;
    for (const file of files) {
      const content = await git(dir, ['cat-file', 'blob', `${commit}:${file}`], env);
      bytes += content.length;
      if (bytes > MAX_BYTES)
        throw new FetchError(`The manifests under "${source.path}" exceed ${MAX_BYTES} bytes.`);
      documents.push({ file, content });
    }
    return { commit, documents, ...(accepted ? { acceptedHostKey: accepted } : {}) };
  } finally {
    await cleanup();
  }
}
