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

/** Every regular file under dir (an etcd data directory: WAL, snapshots, bolt db). */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** Bytes read at a time by textsInFiles. */
const SEARCH_CHUNK = 1024 * 1024;

/**
 * Which of `texts` each file holds, byte for byte. Files are read a chunk at a time (each chunk
 * searched with the tail of the one before, so a text across the boundary is found): etcd
 * preallocates 64 MB WAL files, and reading whole data directories into memory took seconds
 * per test on a loaded machine (one CI run timed out at 60 s).
 */
export async function textsInFiles(
  files: string[],
  texts: string[],
): Promise<{ file: string; holds: (text: string) => boolean }[]> {
  const needles = texts.map((t) => Buffer.from(t));
  const overlap = Math.max(1, ...needles.map((n) => n.length)) - 1;
  const buf = Buffer.alloc(overlap + SEARCH_CHUNK);
  const out: { file: string; holds: (text: string) => boolean }[] = [];
  for (const file of files) {
    const found = new Set<string>();
    const handle = await fs.open(file, 'r');
    try {
      let kept = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buf, kept, SEARCH_CHUNK, null);
        if (bytesRead === 0) break;
        const window = buf.subarray(0, kept + bytesRead);
        needles.forEach((n, i) => window.includes(n) && found.add(texts[i]!));
        kept = Math.min(overlap, window.length);
        buf.copyWithin(0, window.length - kept, window.length);
      }
    } finally {
      await handle.close();
    }
    out.push({
      file,
      holds: (text) => {
        if (!texts.includes(text)) throw new Error(`${text} was not searched for`);
        return found.has(text);
      },
    });
  }
  return out;
}
