import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { StoreTls } from '@vtl/store';

/** What etcdctl answered: refusals are what the security tests look for. */
export interface EtcdctlResult {
  code: number;
  out: string;
}

/**
 * Runs etcdctl (v3 API) against endpoint as an attacker or an operator would: tls adds the
 * client certificate, caOnly only trusts the CA (HTTPS without a client certificate).
 */
export function etcdctl(
  endpoint: string,
  args: string[],
  auth: { tls?: StoreTls; caOnly?: string } = {},
): Promise<EtcdctlResult> {
  const flags = [`--endpoints=${endpoint}`, '--dial-timeout=3s', '--command-timeout=5s'];
  if (auth.tls)
    flags.push(`--cacert=${auth.tls.caFile}`, `--cert=${auth.tls.certFile}`, `--key=${auth.tls.keyFile}`);
  else if (auth.caOnly) flags.push(`--cacert=${auth.caOnly}`);
  return new Promise((resolve) => {
    execFile(
      'etcdctl',
      [...flags, ...args],
      { env: { ...process.env, ETCDCTL_API: '3' }, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, out: `${stdout}${stderr}` });
      },
    );
  });
}

/** Starts a long-running etcdctl command (`lease keep-alive`, `watch`); the caller kills it. */
export function etcdctlProcess(endpoint: string, args: string[], tls: StoreTls): ChildProcess {
  const flags = [
    `--endpoints=${endpoint}`,
    '--dial-timeout=3s',
    `--cacert=${tls.caFile}`,
    `--cert=${tls.certFile}`,
    `--key=${tls.keyFile}`,
  ];
  return spawn('etcdctl', [...flags, ...args], {
    env: { ...process.env, ETCDCTL_API: '3' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Every regular file under dir, as raw bytes (an etcd data directory: WAL, snapshots, bolt db). */
export async function filesUnder(dir: string): Promise<{ file: string; bytes: Buffer }[]> {
  const out: { file: string; bytes: Buffer }[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.push({ file, bytes: await fs.readFile(file) });
  }
  return out;
}
