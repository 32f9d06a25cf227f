import fs from 'node:fs/promises';
import path from 'node:path';
import { GitSourceSecret, StoredSecret, keys } from '@vtl/api';
import type { GitSourceRecord } from '@vtl/gitops';
import type { Store } from '@vtl/store';

/** A Git source's credential, resolved from where it is sealed; `from` names that place for messages. */
export type GitCredential =
  | { kind: 'https'; username: string; password: string; from: string }
  | { kind: 'ssh'; identity: string; knownHosts: string | undefined; from: string };

export class CredentialError extends Error {}

/** The user name GitHub, Gitea and GitLab accept with a token, when the secret names none. */
export const DEFAULT_TOKEN_USER = 'x-access-token';

/**
 * Reads a source's credential: its inline one (sealed under /vtl/secrets/gitops-sources/), or the
 * gitops secret its `secret_ref` names (sealed under /vtl/secrets/gitops/), with keys `token`
 * (or `password`) and `username` for HTTPS, `identity` and `known_hosts` for SSH, like Flux's.
 */
export async function resolveCredential(
  store: Store,
  source: GitSourceRecord,
): Promise<GitCredential | undefined> {
  if (source.credential === 'secret_ref') {
    const name = source.secret_ref ?? '';
    const found = await store.get(keys.gitopsSecrets.one(name), StoredSecret);
    const from = `secret "${name}"`;
    if (!found)
      throw new CredentialError(
        `The source's credential names ${from}, which is not registered: PUT /api/gitops/secrets/${name} with {"data":{"token":"…"}} (HTTPS) or {"data":{"identity":"…","known_hosts":"…"}} (SSH); the next poll retries.`,
      );
    const d = found.value.data;
    const password = d.token ?? d.password;
    if (password) return { kind: 'https', username: d.username ?? DEFAULT_TOKEN_USER, password, from };
    if (d.identity) return { kind: 'ssh', identity: d.identity, knownHosts: d.known_hosts, from };
    throw new CredentialError(
      `${from} has keys ${Object.keys(d).sort().join(', ')} but a Git credential needs "token" (HTTPS, with an optional "username") or "identity" (an SSH private key, with "known_hosts"): register it again with PUT /api/gitops/secrets/${name}.`,
    );
  }
  if (source.credential === 'none') return undefined;
  const sealed = (await store.get(keys.gitopsSourceSecrets.one(source.name), GitSourceSecret))?.value;
  const from = `the source's ${source.credential}`;
  if (source.credential === 'https_token' && sealed?.https_token)
    return { kind: 'https', username: DEFAULT_TOKEN_USER, password: sealed.https_token, from };
  if (source.credential === 'ssh_key' && sealed?.ssh_key)
    return { kind: 'ssh', identity: sealed.ssh_key, knownHosts: sealed.known_hosts, from };
  throw new CredentialError(
    `The source's ${source.credential} is missing from its sealed record: set it again with PUT /api/gitops/sources/${source.name}.`,
  );
}

export interface GitEnv {
  env: NodeJS.ProcessEnv;
  /** Where SSH keeps host keys accepted on first use (no known_hosts given), else undefined. */
  tofuKnownHosts: string | undefined;
  cleanup: () => Promise<void>;
}

/** GIT_ASKPASS: answers git's prompts from its environment, so the script itself holds no secret. */
const ASKPASS = `#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' "$VTL_GIT_USERNAME" ;;
  *) printf '%s\\n' "$VTL_GIT_PASSWORD" ;;
esac
`;

const quote = (p: string) => {
  // GIT_SSH_COMMAND goes through a shell; the state directory is the appliance's own.
  if (p.includes("'")) throw new CredentialError(`The path ${p} holds a quote; use another VTL_STATE_DIR.`);
  return `'${p}'`;
};

/**
 * git's environment for one command. The credential reaches git through it and 0600 files only,
 * never argv (which `ps` shows to every user): an HTTPS token as git's answer to its own prompt
 * (GIT_ASKPASS reading VTL_GIT_PASSWORD, so it is sent only when the server asks, and only to
 * it), an SSH key as a 0600 file that exists for the one command. SSH host keys are checked
 * against the credential's `known_hosts` (StrictHostKeyChecking=yes); without one, the first key
 * seen is accepted and kept per source, and a later different key is refused (docs/gitops.md).
 */
export async function gitEnv(dir: string, cred: GitCredential | undefined, caCert?: string): Promise<GitEnv> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dir,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    LC_ALL: 'C',
  };
  const files: string[] = [];
  let tofuKnownHosts: string | undefined;
  const cleanup = async () => {
    await Promise.all(files.map((f) => fs.rm(f, { force: true })));
  };
  try {
    if (caCert) {
      // The source's own CA (an in-house Git server): git trusts exactly these certificates.
      const ca = path.join(dir, '.vtl-ca.pem');
      await fs.writeFile(ca, caCert, { mode: 0o600 });
      env.GIT_SSL_CAINFO = ca;
    }
    if (cred?.kind === 'https') {
      const askpass = path.join(dir, '.vtl-askpass');
      await fs.writeFile(askpass, ASKPASS, { mode: 0o700 });
      Object.assign(env, {
        GIT_ASKPASS: askpass,
        VTL_GIT_USERNAME: cred.username,
        VTL_GIT_PASSWORD: cred.password,
      });
    }
    if (cred?.kind === 'ssh') {
      const keyFile = path.join(dir, '.ssh-key');
      files.push(keyFile);
      const key = cred.identity.endsWith('\n') ? cred.identity : `${cred.identity}\n`;
      await fs.writeFile(keyFile, key, { mode: 0o600 });
      let known: string;
      let checking: string;
      if (cred.knownHosts) {
        known = path.join(dir, '.ssh-known-hosts');
        files.push(known);
        await fs.writeFile(known, `${cred.knownHosts.trim()}\n`, { mode: 0o600 });
        checking = 'yes';
      } else {
        known = tofuKnownHosts = path.join(dir, 'vtl-accepted-host-keys');
        checking = 'accept-new';
      }
      env.GIT_SSH_COMMAND = [
        'ssh -F /dev/null',
        `-i ${quote(keyFile)}`,
        '-o IdentitiesOnly=yes -o BatchMode=yes -o PasswordAuthentication=no',
        `-o StrictHostKeyChecking=${checking}`,
        `-o UserKnownHostsFile=${quote(known)} -o GlobalKnownHostsFile=/dev/null`,
      ].join(' ');
    }
  } catch (err) {
    await cleanup();
    throw err;
  }
  return { env, tofuKnownHosts, cleanup };
}

/**
 * What a failed git command's stderr means for the person who must fix it. Git's messages name
 * the URL, never the credential (it is not in the URL: such URLs are refused).
 */
export function explainGitFailure(stderr: string, cred: GitCredential | undefined): string | undefined {
  if (/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|host key is known/i.test(stderr))
    return cred?.kind === 'ssh' && cred.knownHosts
      ? `The SSH server's host key is not one of the known_hosts in ${cred.from}: if the server's key really changed, check its fingerprint with the server's admin and register the new known_hosts; otherwise something else answers at that address.`
      : `The SSH server's host key differs from the one accepted on first use: if it really changed, give the new one as known_hosts in the credential (a secret's "known_hosts" key).`;
  if (
    /SSL certificate problem|server certificate verification failed|certificate verify failed/i.test(stderr)
  )
    return `The Git server's certificate is not trusted: if it is signed by an in-house CA, give that CA's certificate (PEM) as the source's ca_cert (PUT /api/gitops/sources/{name}); nothing was sent to it.`;
  if (/Permission denied \(publickey/i.test(stderr))
    return `The SSH server refused the key from ${cred?.from ?? 'the source (it has none)'}: add its public key to the repository's deploy keys, or register the right "identity"; the next poll retries.`;
  if (
    /Authentication failed|could not read (Username|Password)|terminal prompts disabled|returned error: 40[13]/i.test(
      stderr,
    )
  )
    return cred
      ? `The Git server refused the credential from ${cred.from} (HTTP authentication failed): register the right token (a secret's "token" key, PUT /api/gitops/secrets/{name}); the next poll retries.`
      : `The Git server asks for a credential and the source has none: register a token as a secret and set credential {"secret_ref": name} with PUT /api/gitops/sources/{name}.`;
  return undefined;
}
