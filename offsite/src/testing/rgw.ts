import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { freePorts } from '@vtl/api/testing/free-port';
import { s3For, type RemoteConnection } from '../remote.js';
import { cephConf } from './ceph-conf.js';

const run = promisify(execFile);
const READY_TIMEOUT_MS = 90_000;

/** A throwaway single-node Ceph cluster with an S3 gateway on 127.0.0.1 (tests only). */
export interface TestRgw {
  /** host:port of the S3 endpoint (plain HTTP). */
  endpoint: string;
  access_key: string;
  secret_key: string;
  /** Created empty at start. */
  bucket: string;
  region: string;
  /** Holds ceph.conf, log/ (one file per daemon) and the mon store. */
  dir: string;
  /** A RemoteConnection to the bucket, optionally under a key prefix. */
  remote(prefix?: string): RemoteConnection;
  /** The body of POST /api/remotes that registers this bucket as remote `name` (plain HTTP, path style). */
  remoteRequest(name: string, extra?: { prefix?: string }): Record<string, unknown>;
  /** SIGSTOP radosgw: connections are accepted but nothing answers (a hung server). */
  pause(): void;
  /** SIGCONT radosgw after pause(). */
  resume(): void;
  /** Kills radosgw: connections are refused (S3 down); the data stays in the cluster. */
  stopGateway(): Promise<void>;
  /** Starts radosgw again on the same port and waits until S3 answers. */
  startGateway(): Promise<void>;
  /** Kills every daemon and removes the directory. */
  stop(): Promise<void>;
}

/** Options of startTestRgw(). */
export interface TestRgwOptions {
  /** The OSD keeps objects in memory (memstore) up to this many bytes; default 16 GiB. */
  memstoreBytes?: number;
}

/**
 * Kills the daemons whose pids are in DIR/run/*.vtl-pid and removes DIR once the test process
 * is gone, even by SIGKILL (a timed-out test worker), so no cluster outlives its test.
 */
const WATCHDOG = `parent=$1 dir=$2
while kill -0 "$parent" 2>/dev/null && [ -d "$dir" ]; do sleep 1; done
[ -d "$dir" ] || exit 0
for f in "$dir"/run/*.vtl-pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
sleep 1; rm -rf "$dir"`;

/** Every daemon this process started, killed if the process exits without stopping them. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts 1 mon, 1 OSD (memstore) and radosgw (beast) under a temp dir as root, creates an S3
 * user with random keys and a bucket, and resolves once S3 answers (about 5 s, ~300 MB).
 * Needs Debian's ceph-mon ceph-osd radosgw ceph-common (scripts/install-test-deps.sh).
 */
export async function startTestRgw(opts: TestRgwOptions = {}): Promise<TestRgw> {
  const dir = await mkdtemp(join(tmpdir(), 'vtl-rgw-'));
  const daemons: ChildProcess[] = [];
  let gateway: ChildProcess | undefined;
  const conf = join(dir, 'ceph.conf');
  const killAll = async () => {
    await Promise.all([gateway, ...daemons].map((c) => (c ? killAndWait(c) : undefined)));
  };
  try {
    await Promise.all(['run', 'log', 'mon/a', 'osd/0'].map((d) => mkdir(join(dir, d), { recursive: true })));
    spawn('bash', ['-c', WATCHDOG, 'vtl-rgw-watchdog', String(process.pid), dir], {
      stdio: 'ignore',
      detached: true,
    }).unref();
    const [monPort, rgwPort] = (await freePorts(2)) as [number, number];
    const fsid = randomUUID();
    await writeFile(
      conf,
      cephConf({ dir, fsid, monPort, rgwPort, memstoreBytes: opts.memstoreBytes ?? 16 * 2 ** 30 }),
    );
    await tool('ceph-authtool', [
      '--create-keyring',
      join(dir, 'keyring'),
      '--gen-key',
      '-n',
      'mon.',
      '--cap',
      'mon',
      'allow *',
    ]);
    await tool('monmaptool', [
      '--create',
      '--fsid',
      fsid,
      '--addv',
      'a',
      `[v2:127.0.0.1:${monPort}]`,
      join(dir, 'monmap'),
    ]);
    await tool('ceph-mon', ['--mkfs', '-i', 'a', '--monmap', join(dir, 'monmap'), '-c', conf]);
    daemons.push(daemon(dir, 'ceph-mon', ['-f', '-i', 'a', '-c', conf]));
    const osdUuid = randomUUID();
    await tool('ceph', ['-c', conf, '--connect-timeout', '30', 'osd', 'new', osdUuid]);
    await tool('ceph-osd', ['-i', '0', '--mkfs', '--osd-uuid', osdUuid, '-c', conf]);
    daemons.push(daemon(dir, 'ceph-osd', ['-f', '-i', '0', '-c', conf]));

    const endpoint = `127.0.0.1:${rgwPort}`;
    const startGateway = async () => {
      gateway = daemon(dir, 'radosgw', ['-f', '-n', 'client.rgw.a', '-c', conf]);
      await waitForS3(endpoint, gateway, dir);
    };
    await startGateway();

    const access_key = `VTL${randomBytes(8).toString('hex').toUpperCase()}`;
    const secret_key = randomBytes(24).toString('base64url');
    await tool('radosgw-admin', [
      '-c',
      conf,
      'user',
      'create',
      '--uid=vtl-test',
      '--display-name=vtl test',
      `--access-key=${access_key}`,
      `--secret-key=${secret_key}`,
    ]);
    const bucket = 'vtl-test';
    const remote = (prefix = ''): RemoteConnection => ({
      endpoint,
      region: '',
      bucket,
      prefix,
      access_key,
      secret_key,
      use_ssl: false,
      path_style: true,
    });
    const s3 = s3For(remote());
    try {
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    } finally {
      s3.destroy();
    }
    const signalGateway = (sig: NodeJS.Signals) => {
      if (!gateway || gateway.exitCode !== null) throw new Error('radosgw is not running');
      gateway.kill(sig);
    };
    return {
      endpoint,
      access_key,
      secret_key,
      bucket,
      region: 'us-east-1',
      dir,
      remote,
      remoteRequest: (name, extra = {}) => ({
        name,
        endpoint,
        region: 'us-east-1',
        bucket,
        access_key,
        secret_key,
        use_ssl: false,
        path_style: true,
        ...extra,
      }),
      pause: () => signalGateway('SIGSTOP'),
      resume: () => signalGateway('SIGCONT'),
      stopGateway: async () => {
        if (gateway) await killAndWait(gateway);
        gateway = undefined;
      },
      startGateway: async () => {
        if (gateway && gateway.exitCode === null && gateway.signalCode === null) return;
        await startGateway();
      },
      stop: async () => {
        await killAll();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await killAll();
    const logs = join(tmpdir(), `${dir.split('/').pop()}-failed`);
    await rm(logs, { recursive: true, force: true });
    await run('cp', ['-r', join(dir, 'log'), logs]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw new Error(`the test RGW did not start: ${(err as Error).message} (daemon logs kept in ${logs})`, {
      cause: err,
    });
  }
}

async function tool(cmd: string, args: string[]): Promise<void> {
  try {
    await run(cmd, args, { timeout: 60_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** A daemon in the foreground (-f), its output appended to log/<name>.out. */
function daemon(dir: string, cmd: string, args: string[]): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = createWriteStream(join(dir, 'log', `${cmd}.out`), { flags: 'a' });
  out.on('error', () => undefined);
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  child.on('error', () => undefined);
  if (child.pid) writeFileSync(join(dir, 'run', `${cmd}.vtl-pid`), String(child.pid));
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

async function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

/** Polls an anonymous GET / until the gateway answers with anything HTTP. */
async function waitForS3(endpoint: string, gateway: ChildProcess, dir: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gateway.exitCode !== null || gateway.signalCode !== null) {
      throw new Error(`radosgw exited (${gateway.exitCode ?? gateway.signalCode}); see ${join(dir, 'log')}`);
    }
    try {
      const res = await fetch(`http://${endpoint}/`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`radosgw at ${endpoint} did not answer within ${READY_TIMEOUT_MS / 1000} s`);
}
