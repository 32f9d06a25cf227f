import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@vtl/store/testing';

const run = promisify(execFile);

/**
 * Test-only: one bare repository served by real servers from Debian, so the Git source talks to
 * the software a user's Git host runs (git daemon, anonymous) and its credentials are checked by it:
 * - HTTP(S) smart protocol: lighttpd with mod_auth (Basic, an htpasswd file) in front of git's
 *   own git-http-backend (CGI);
 * - SSH: OpenSSH's sshd on its own port, config and host key, the client key's authorized_keys
 *   line restricted to git-shell.
 * Each runs as the test's user on 127.0.0.1 and a free port, and stops with stop().
 */
export class TestGitRepo {
  private readonly children: ChildProcess[] = [];
  private constructor(readonly dir: string) {}

  static async create(): Promise<TestGitRepo> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-gitauth-'));
    await run('git', ['init', '--quiet', '--bare', '--initial-branch=main', path.join(dir, 'repo.git')]);
    await run('git', ['init', '--quiet', '--initial-branch=main', path.join(dir, 'work')]);
    return new TestGitRepo(dir);
  }

  get repo() {
    return path.join(this.dir, 'repo.git');
  }

  private git(args: string[]) {
    return run('git', args, {
      cwd: path.join(this.dir, 'work'),
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'ops',
        GIT_AUTHOR_EMAIL: 'ops@example.com',
        GIT_COMMITTER_NAME: 'ops',
        GIT_COMMITTER_EMAIL: 'ops@example.com',
      },
    });
  }

  /** Writes (or, with null, removes) files, commits and pushes to the served repository. */
  async commit(files: Record<string, string | null>, message: string): Promise<string> {
    for (const [file, content] of Object.entries(files)) {
      const full = path.join(this.dir, 'work', file);
      if (content === null) await fs.rm(full, { force: true });
      else {
        await fs.mkdir(path.dirname(full), { recursive: true });
        await fs.writeFile(full, content);
      }
    }
    await this.git(['add', '-A']);
    await this.git(['commit', '--quiet', '--allow-empty', '-m', message]);
    await this.git(['push', '--quiet', this.repo, 'HEAD:refs/heads/main']);
    return (await this.git(['rev-parse', 'HEAD'])).stdout.trim();
  }

  private async spawnServer(cmd: string, args: string[], port: number, what: string): Promise<void> {
    let output = '';
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    this.children.push(child);
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}): ${output}`);
      const up = await new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => {
          s.end();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      });
      if (up) return;
      if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port}: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Debian's `git daemon` (anonymous, read-only git:// protocol): the clone URL. */
  async serveGitDaemon(): Promise<string> {
    const port = await freePort();
    const args = ['daemon', '--reuseaddr', `--base-path=${this.dir}`, '--export-all', `--port=${port}`];
    await this.spawnServer('git', [...args, '--listen=127.0.0.1', this.dir], port, 'git daemon');
    return `git://127.0.0.1:${port}/repo.git`;
  }

  /**
   * lighttpd over HTTPS (its own self-signed certificate for 127.0.0.1) demanding HTTP Basic auth
   * of `user`/`password` for the repository: the clone URL and the certificate (PEM) to trust.
   */
  async serveHttps(user: string, password: string): Promise<{ url: string; caCert: string }> {
    const port = await freePort();
    const d = path.join(this.dir, `https-${port}`);
    await fs.mkdir(d);
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      path.join(d, 'key.pem'),
      '-out',
      path.join(d, 'cert.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=vtl-test-git',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]);
    // The password goes to openssl on stdin, never its argv.
    const hashed = await new Promise<string>((resolve, reject) => {
      const p = spawn('openssl', ['passwd', '-apr1', '-stdin'], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      p.stdout.on('data', (c: Buffer) => (out += c.toString()));
      p.on('error', reject);
      p.on('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`openssl ${code}`))));
      p.stdin.end(`${password}\n`);
    });
    await fs.writeFile(path.join(d, 'htpasswd'), `${user}:${hashed}\n`, { mode: 0o600 });
    const conf = `
server.document-root = "${d}"
server.bind = "127.0.0.1"
server.port = ${port}
server.errorlog = "${d}/error.log"
server.modules = ("mod_openssl", "mod_auth", "mod_authn_file", "mod_alias", "mod_setenv", "mod_cgi")
ssl.engine = "enable"
ssl.pemfile = "${d}/cert.pem"
ssl.privkey = "${d}/key.pem"
alias.url = ("/git/" => "/usr/lib/git-core/git-http-backend/")
$HTTP["url"] =~ "^/git/" {
  cgi.assign = ("" => "")
  setenv.add-environment = ("GIT_PROJECT_ROOT" => "${this.dir}", "GIT_HTTP_EXPORT_ALL" => "")
  auth.backend = "htpasswd"
  auth.backend.htpasswd.userfile = "${d}/htpasswd"
  auth.require = ("" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
}
`;
    await fs.writeFile(path.join(d, 'lighttpd.conf'), conf);
    await this.spawnServer('lighttpd', ['-D', '-f', path.join(d, 'lighttpd.conf')], port, 'lighttpd');
    return {
      url: `https://127.0.0.1:${port}/git/repo.git`,
      caCert: await fs.readFile(path.join(d, 'cert.pem'), 'utf8'),
    };
  }

  /**
   * sshd accepting only `authorizedPublicKey` (restricted to git-shell); the clone URL and the
   * known_hosts line of its host key.
   */
  async serveSsh(authorizedPublicKey: string): Promise<{ url: string; knownHosts: string }> {
    const port = await freePort();
    const d = path.join(this.dir, `ssh-${port}`);
    await fs.mkdir(d);
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(d, 'host_key')]);
    await fs.writeFile(
      path.join(d, 'authorized_keys'),
      `restrict,command="git-shell -c \\"$SSH_ORIGINAL_COMMAND\\"" ${authorizedPublicKey.trim()}\n`,
      { mode: 0o600 },
    );
    await fs.writeFile(
      path.join(d, 'sshd_config'),
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${d}/host_key`,
        `AuthorizedKeysFile ${d}/authorized_keys`,
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin prohibit-password',
        'StrictModes no',
        'UsePAM no',
        `PidFile ${d}/sshd.pid`,
        '',
      ].join('\n'),
    );
    await fs.mkdir('/run/sshd', { recursive: true }); // sshd's privilege separation directory
    await this.spawnServer('/usr/sbin/sshd', ['-D', '-e', '-f', path.join(d, 'sshd_config')], port, 'sshd');
    const pub = (await fs.readFile(path.join(d, 'host_key.pub'), 'utf8')).trim().split(' ');
    const user = os.userInfo().username;
    return {
      url: `ssh://${user}@127.0.0.1:${port}${this.repo}`,
      knownHosts: `[127.0.0.1]:${port} ${pub[0]} ${pub[1]}`,
    };
  }

  async stop(): Promise<void> {
    for (const c of this.children) if (c.exitCode === null) c.kill('SIGTERM');
    await Promise.all(
      this.children.map((c) =>
        c.exitCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve(),
      ),
    );
    await fs.rm(this.dir, { recursive: true, force: true });
  }
}

/** A fresh ed25519 key pair (OpenSSH formats), for a test's client identity. */
export async function sshKeyPair(): Promise<{ privateKey: string; publicKey: string }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-key-'));
  try {
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'vtl-test', '-f', path.join(dir, 'k')]);
    return {
      privateKey: await fs.readFile(path.join(dir, 'k'), 'utf8'),
      publicKey: await fs.readFile(path.join(dir, 'k.pub'), 'utf8'),
    };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
