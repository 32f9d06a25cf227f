import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { GitSourceRecord, GitSourceSecret, ManifestFile } from '@vtl/gitops';

/** The most one git command may take (a fetch of a slow server). */
const GIT_TIMEOUT_MS = 120_000;
/** The manifests of one revision, at most (the apply body limit is 8 MB). */
const MAX_FILES = 1000;
const MAX_BYTES = 6 * 1024 * 1024;

export interface FetchedRevision {
  commit: string;
  documents: ManifestFile[];
}

export class FetchError extends Error {}

interface GitEnv {
  env: NodeJS.ProcessEnv;
  cleanup: () => Promise<void>;
}

/**
 * The credential reaches git through its environment only (never argv, which `ps` shows): an
 * HTTPS token as an Authorization header (GIT_CONFIG_*), an SSH key as a 0600 file for the one
 * command, deleted afterwards.
 */
async function gitEnv(dir: string, secret: GitSourceSecret | undefined): Promise<GitEnv> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dir,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    LC_ALL: 'C',
  };
  let cleanup = async () => {};
  if (secret?.https_token) {
    const basic = Buffer.from(`x-access-token:${secret.https_token}`).toString('base64');
    Object.assign(env, {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    });
  }
  if (secret?.ssh_key) {
    const keyFile = path.join(dir, '.ssh-key');
    await fs.writeFile(keyFile, secret.ssh_key.endsWith('\n') ? secret.ssh_key : `${secret.ssh_key}\n`, {
      mode: 0o600,
    });
    const known = path.join(path.dirname(dir), 'known_hosts');
    env.GIT_SSH_COMMAND = `ssh -i ${keyFile} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile=${known}`;
    cleanup = () => fs.rm(keyFile, { force: true });
  }
  return { env, cleanup };
}

function git(dir: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd: dir, env, timeout: GIT_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          // stderr names the problem (unreachable host, unknown branch); it never holds the token.
          const why = stderr.trim().split('\n').filter(Boolean).slice(-2).join(' ') || err.message;
          reject(new FetchError(`git ${args[0]} failed: ${why}`));
        } else resolve(stdout);
      },
    );
  });
}

const isManifest = (f: string) => /\.ya?ml$/i.test(f);

/**
 * Fetches the branch's head into a local repository (`dir`, kept between polls so a fetch moves
 * only new objects) and reads every *.yaml / *.yml under `path` at that commit, without a checkout.
 */
export async function fetchRevision(
  dir: string,
  source: GitSourceRecord,
  secret: GitSourceSecret | undefined,
): Promise<FetchedRevision> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const { env, cleanup } = await gitEnv(dir, secret);
  try {
    await fs.access(path.join(dir, 'HEAD')).catch(() => git(dir, ['init', '--quiet', '--bare'], env));
    await git(
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
    );
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
    return { commit, documents };
  } finally {
    await cleanup();
  }
}
