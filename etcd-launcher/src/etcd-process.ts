import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { isIP } from 'node:net';
import type { TlsFiles } from './tls-files.js';

/** A running etcd server started by startEtcd(). */
export interface EtcdProcess {
  /** Client URL, e.g. http://127.0.0.1:23790 (https:// with tls). */
  endpoint: string;
  pid: number;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs` (default 10 s). */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL: a crash, for failover tests. */
  kill(): Promise<void>;
}

/** Options of startEtcd(). */
export interface EtcdOptions {
  dataDir: string;
  clientPort: number;
  peerPort: number;
  name?: string;
  /** Address to bind and advertise; default 127.0.0.1. */
  host?: string;
  /** etcd's stdout/stderr go here (appended); without it the last output is kept for error messages. */
  logFile?: string;
  /** More etcd flags; a flag given here overrides the one set by startEtcd (e.g. --initial-cluster). */
  extraArgs?: string[];
  /**
   * Own process group: a terminal's Ctrl-C then reaches only the parent, which stops etcd last,
   * after the processes that still write to it.
   */
  detached?: boolean;
  /**
   * etcd gets SIGTERM from the kernel when the process that started it dies, however it died
   * (prctl PR_SET_PDEATHSIG, set by util-linux's `setpriv --pdeathsig` before it execs etcd).
   * Without setpriv on PATH this is skipped; the appliance's next start stops leftovers anyway.
   */
  dieWithParent?: boolean;
  /**
   * Serve client and peer traffic over TLS and admit only clients whose certificate the CA
   * signed: caFile is the CA, certFile/keyFile etcd's own pair (serverAuth + clientAuth).
   */
  tls?: TlsFiles;
}

const HEALTH_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 10_000;
const TAIL_BYTES = 8 * 1024;

/** Every etcd this process started, killed if the process exits without stopping them. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Spawns the `etcd` binary and resolves once GET /health reports healthy. */
export async function startEtcd(opts: EtcdOptions): Promise<EtcdProcess> {
  const host = opts.host ?? '127.0.0.1';
  const name = opts.name ?? 'default';
  const scheme = opts.tls ? 'https' : 'http';
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const clientUrl = `${scheme}://${urlHost}:${opts.clientPort}`;
  const peerUrl = `${scheme}://${urlHost}:${opts.peerPort}`;
  await mkdir(opts.dataDir, { recursive: true, mode: 0o700 });
  const args = [
    `--name=${name}`,
    `--data-dir=${opts.dataDir}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=${name}=${peerUrl}`,
    ...(opts.tls ? etcdTlsArgs(opts.tls) : []),
    ...(opts.extraArgs ?? []),
  ];
  const [command, argv] =
    opts.dieWithParent && (await hasSetpriv())
      ? ['setpriv', ['--pdeathsig', 'SIGTERM', '--', 'etcd', ...args]]
      : ['etcd', args];
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached ?? false });
  running.add(child);
  const output = captureOutput(child, opts.logFile);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => running.delete(child));
  const spawnFailed = new Promise<never>((_, reject) => child.once('error', reject));
  spawnFailed.catch(() => undefined);

  const where = () => (opts.logFile ? `see ${opts.logFile}` : `last output:\n${output.tail()}`);
  try {
    const tls = opts.tls && (await readTls(opts.tls));
    await Promise.race([spawnFailed, waitHealthy(clientUrl, child, where, tls)]);
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    await output.close();
    throw err;
  }

  const signal = async (sig: NodeJS.Signals, graceMs: number) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(sig);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
    await output.close();
  };
  return {
    endpoint: clientUrl,
    pid: child.pid ?? -1,
    stop: (graceMs = STOP_GRACE_MS) => signal('SIGTERM', graceMs),
    kill: () => signal('SIGKILL', 0),
  };
}

let setprivFound: Promise<boolean> | undefined;
/** util-linux's setpriv with --pdeathsig (util-linux 2.33+; Debian 10 and later). */
function hasSetpriv(): Promise<boolean> {
  setprivFound ??= new Promise((resolve) => {
    const probe = spawn('setpriv', ['--pdeathsig', 'keep', '--', 'true'], { stdio: 'ignore' });
    probe.once('error', () => resolve(false));
    probe.once('exit', (code) => resolve(code === 0));
  });
  return setprivFound;
}

/** etcd's flags for TLS with client-certificate authentication, on client and peer URLs. */
export function etcdTlsArgs(tls: TlsFiles): string[] {
  return [
    '--client-cert-auth',
    `--trusted-ca-file=${tls.caFile}`,
    `--cert-file=${tls.certFile}`,
    `--key-file=${tls.keyFile}`,
    '--peer-client-cert-auth',
    `--peer-trusted-ca-file=${tls.caFile}`,
    `--peer-cert-file=${tls.certFile}`,
    `--peer-key-file=${tls.keyFile}`,
  ];
}

interface TlsPems {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

const readTls = async (tls: TlsFiles): Promise<TlsPems> => {
  const [ca, cert, key] = await Promise.all([
    readFile(tls.caFile),
    readFile(tls.certFile),
    readFile(tls.keyFile),
  ]);
  return { ca, cert, key };
};

/** GET /health, presenting etcd's own certificate when it wants one. */
async function health(url: string, tls: TlsPems | undefined): Promise<boolean> {
  if (!tls) {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) });
    return ((await res.json()) as { health?: string }).health === 'true';
  }
  return new Promise((resolve, reject) => {
    // No SNI for an IP address (RFC 6066); the certificate still has to name it.
    const servername = isIP(new URL(url).hostname.replace(/^\[|\]$/g, '')) ? '' : undefined;
    const req = request(`${url}/health`, { ...tls, servername, timeout: 1_000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        try {
          resolve((JSON.parse(body) as { health?: string }).health === 'true');
        } catch (err) {
          reject(err as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function waitHealthy(
  url: string,
  child: ChildProcess,
  where: () => string,
  tls: TlsPems | undefined,
): Promise<void> {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `etcd exited (${child.exitCode ?? child.signalCode}) before it became healthy; ${where()}`,
      );
    }
    try {
      if (await health(url, tls)) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`etcd at ${url} was not healthy within ${HEALTH_TIMEOUT_MS / 1000} s; ${where()}`);
}

/** Sends etcd's output to the log file, keeping a short tail in memory for error messages. */
function captureOutput(child: ChildProcess, logFile?: string): { tail(): string; close(): Promise<void> } {
  let tail = '';
  let closing: Promise<void> | undefined;
  const file: WriteStream | undefined = logFile ? createWriteStream(logFile, { flags: 'a' }) : undefined;
  file?.on('error', () => undefined);
  const onData = (chunk: Buffer) => {
    if (file && !file.writableEnded) file.write(chunk);
    tail = (tail + chunk.toString()).slice(-TAIL_BYTES);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  return {
    tail: () => tail,
    close: () => (closing ??= new Promise((resolve) => (file ? file.end(() => resolve()) : resolve()))),
  };
}
