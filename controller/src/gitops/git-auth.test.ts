import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GitSourceRecord } from '@vtl/gitops';
import { FetchError, fetchRevision } from './git-fetch.js';
import type { GitCredential } from './git-credentials.js';
import { TestGitRepo, sshKeyPair } from './testing/git-servers.js';

const TOKEN = 'tok-3f9a1c-never-shown';

/**
 * Authenticated Git sources against real servers (Debian's lighttpd + git-http-backend demanding
 * Basic auth, OpenSSH's sshd), with `git` and `ssh` wrapped to record their argument lists: the
 * credential must reach them through the environment and 0600 files only.
 */
describe('fetchRevision with credentials (real lighttpd + git-http-backend, real sshd)', () => {
  let repo: TestGitRepo;
  let dir: string;
  let argvLog: string;
  let savedPath: string | undefined;
  let commit: string;
  let httpUrl: string;
  let caCert: string;
  let ssh: { url: string; knownHosts: string };
  let key: { privateKey: string; publicKey: string };
  let otherKey: { privateKey: string; publicKey: string };

  const source = (url: string, ca: string | undefined = caCert): GitSourceRecord => ({
    name: 's',
    url,
    ...(ca && url.startsWith('https:') ? { ca_cert: ca } : {}),
    branch: 'main',
    path: 'site',
    interval_sec: 60,
    prune: true,
    suspended: false,
    credential: 'secret_ref',
    secret_ref: 'git-creds',
    created_at: '',
  });
  const https = (password: string): GitCredential => ({
    kind: 'https',
    username: 'x-access-token',
    password,
    from: 'secret "git-creds"',
  });
  const sshCred = (identity: string, knownHosts: string | undefined): GitCredential => ({
    kind: 'ssh',
    identity,
    knownHosts,
    from: 'secret "git-ssh"',
  });
  let n = 0;
  const cache = () => path.join(dir, `cache-${n++}`);

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-gitauth-client-'));
    argvLog = path.join(dir, 'argv.log');
    const bin = path.join(dir, 'bin');
    await fs.mkdir(bin);
    for (const [tool, real] of <[string, string][]>[
      ['git', '/usr/bin/git'],
      ['ssh', '/usr/bin/ssh'],
    ])
      await fs.writeFile(
        path.join(bin, tool),
        `#!/bin/sh\nprintf '%s\\n' "${tool} $*" >> '${argvLog}'\nexec ${real} "$@"\n`,
        { mode: 0o755 },
      );
    savedPath = process.env.PATH;
    process.env.PATH = `${bin}:${process.env.PATH}`;
    [repo, key, otherKey] = await Promise.all([TestGitRepo.create(), sshKeyPair(), sshKeyPair()]);
    commit = await repo.commit({ 'site/pool.yaml': 'kind: TapePool\n' }, 'one');
    ({ url: httpUrl, caCert } = await repo.serveHttps('x-access-token', TOKEN));
    ssh = await repo.serveSsh(key.publicKey);
  }, 60_000);
  afterAll(async () => {
    process.env.PATH = savedPath;
    await repo?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('HTTPS: the right token fetches; a wrong one or none says what to do, without the token', async () => {
    const got = await fetchRevision(cache(), source(httpUrl), https(TOKEN));
    expect(got.commit).toBe(commit);
    expect(got.documents).toEqual([{ file: 'site/pool.yaml', content: 'kind: TapePool\n' }]);

    const wrong = await fetchRevision(cache(), source(httpUrl), https('not-the-token')).catch((e) => e);
    expect(wrong).toBeInstanceOf(FetchError);
    expect(wrong.message).toMatch(/refused the credential from secret "git-creds".*register the right token/);
    expect(wrong.message).not.toContain('not-the-token');

    const none = await fetchRevision(cache(), source(httpUrl), undefined).catch((e) => e);
    expect(none.message).toMatch(/asks for a credential and the source has none/);
  }, 60_000);

  it("HTTPS: a server certificate outside the source's ca_cert is refused before any credential is sent", async () => {
    const untrusted = await fetchRevision(cache(), source(httpUrl, ''), https(TOKEN)).catch((e) => e);
    expect(untrusted).toBeInstanceOf(FetchError);
    expect(untrusted.message).toMatch(/certificate is not trusted.*ca_cert/);
  }, 60_000);

  it('SSH: the key with pinned known_hosts fetches; the key file is gone afterwards', async () => {
    const c = cache();
    const got = await fetchRevision(c, source(ssh.url), sshCred(key.privateKey, ssh.knownHosts));
    expect(got.commit).toBe(commit);
    expect(got.acceptedHostKey).toBeUndefined();
    const left = await fs.readdir(c);
    expect(left).not.toContain('.ssh-key');
    expect(left).not.toContain('.ssh-known-hosts');
  }, 60_000);

  it('SSH: a key the server does not know, or a host key other than the pinned one, is a clear failure', async () => {
    const refused = await fetchRevision(
      cache(),
      source(ssh.url),
      sshCred(otherKey.privateKey, ssh.knownHosts),
    ).catch((e) => e);
    expect(refused).toBeInstanceOf(FetchError);
    expect(refused.message).toMatch(/SSH server refused the key from secret "git-ssh".*deploy keys/);

    // known_hosts of some other server at that address: the key is never offered to it.
    const [host] = ssh.knownHosts.split(' ');
    const impostor = `${host} ${otherKey.publicKey.trim().split(' ').slice(0, 2).join(' ')}`;
    const spoofed = await fetchRevision(cache(), source(ssh.url), sshCred(key.privateKey, impostor)).catch(
      (e) => e,
    );
    expect(spoofed).toBeInstanceOf(FetchError);
    expect(spoofed.message).toMatch(/host key is not one of the known_hosts in secret "git-ssh"/);
  }, 60_000);

  it('SSH without known_hosts: the first key seen is accepted and reported, and kept for the next fetch', async () => {
    const c = cache();
    const first = await fetchRevision(c, source(ssh.url), sshCred(key.privateKey, undefined));
    expect(first.acceptedHostKey).toContain('127.0.0.1');
    const kept = await fs.readFile(path.join(c, 'vtl-accepted-host-keys'), 'utf8');
    expect(kept).toContain(ssh.knownHosts.split(' ')[2]);
    const again = await fetchRevision(c, source(ssh.url), sshCred(key.privateKey, undefined));
    expect(again.acceptedHostKey).toBeUndefined();
    // A different key at the same address later is refused, not accepted again.
    await fs.writeFile(
      path.join(c, 'vtl-accepted-host-keys'),
      `${ssh.knownHosts.split(' ')[0]} ${otherKey.publicKey.trim().split(' ').slice(0, 2).join(' ')}\n`,
    );
    const changed = await fetchRevision(c, source(ssh.url), sshCred(key.privateKey, undefined)).catch(
      (e) => e,
    );
    expect(changed.message).toMatch(/differs from the one accepted on first use/);
  }, 60_000);

  it('no credential ever appeared in an argument list of git or ssh', async () => {
    const argv = await fs.readFile(argvLog, 'utf8');
    expect(argv).toContain('git fetch');
    expect(argv).toContain('ssh -F /dev/null -i');
    expect(argv).not.toContain(TOKEN);
    expect(argv).not.toContain('not-the-token');
    for (const k of [key, otherKey]) {
      const body = k.privateKey.split('\n')[1] ?? '';
      expect(body.length).toBeGreaterThan(20);
      expect(argv).not.toContain(body);
    }
  });
});
