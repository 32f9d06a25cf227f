import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePki } from '@vtl/etcd-launcher';
import { Store, loopbackServerName } from './store.js';
import { startTestEtcd, type TestEtcd } from './test-etcd.js';

const run = promisify(execFile);

/** etcdctl's exit and output: refusals are what these tests look for. */
async function etcdctl(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run('etcdctl', ['--dial-timeout=3s', '--command-timeout=5s', ...args], {
      env: { ...process.env, ETCDCTL_API: '3' },
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

let etcd: TestEtcd;
beforeAll(async () => {
  etcd = await startTestEtcd({ tls: true });
});
afterAll(() => etcd?.stop());

describe('etcd over TLS with client certificates', () => {
  it('keeps the PKI private: directory 0700, keys 0600, and reuses it on the next start', async () => {
    const pki = etcd.pki!;
    expect((await stat(pki.dir)).mode & 0o777).toBe(0o700);
    const keys = (await readdir(pki.dir)).filter((f) => f.endsWith('.key'));
    expect(keys.sort()).toEqual([
      'admin.key',
      'apiserver.key',
      'ca.key',
      'controller.key',
      'etcd.key',
      'nodeagent.key',
    ]);
    for (const f of keys) expect((await stat(join(pki.dir, f))).mode & 0o777).toBe(0o600);
    const before = await stat(pki.files('apiserver').certFile);
    await ensurePki(pki.dir);
    expect((await stat(pki.files('apiserver').certFile)).mtimeMs).toBe(before.mtimeMs);
  });

  it('serves a store that presents a certificate the CA signed', async () => {
    expect(etcd.endpoint).toMatch(/^https:/);
    const store = await Store.connect({ endpoints: [etcd.endpoint], tls: etcd.pki!.files('apiserver') });
    try {
      await store.put('/t/tls/a', { ok: true });
      expect((await store.get('/t/tls/a', (await import('zod')).z.unknown()))?.value).toEqual({ ok: true });
    } finally {
      await store.close();
    }
  });

  it('refuses a store without a certificate, and plain HTTP', async () => {
    await expect(Store.connect({ endpoints: [etcd.endpoint] })).rejects.toMatchObject({
      code: 'unavailable',
    });
    const plain = etcd.endpoint.replace('https:', 'http:');
    await expect(Store.connect({ endpoints: [plain] })).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('refuses a certificate from another CA', async () => {
    const other = await ensurePki(join(etcd.dir, 'other-pki'));
    const tls = { ...other.files('admin'), caFile: etcd.pki!.caFile };
    await expect(Store.connect({ endpoints: [etcd.endpoint], tls })).rejects.toMatchObject({
      code: 'unavailable',
    });
  });

  it('refuses etcdctl over plain HTTP and over HTTPS without a client certificate; admits it with one', async () => {
    const port = new URL(etcd.endpoint).port;
    const put = ['put', '/vtl/auth/sessions/forged', '{"username":"x","role":"admin"}'];
    const plain = await etcdctl([`--endpoints=http://127.0.0.1:${port}`, ...put]);
    expect(plain.code).not.toBe(0);
    const certless = await etcdctl([
      `--endpoints=https://127.0.0.1:${port}`,
      `--cacert=${etcd.pki!.caFile}`,
      ...put,
    ]);
    expect(certless.code).not.toBe(0);
    const admin = etcd.pki!.files('admin');
    const get = ['get', '/vtl/auth/sessions/forged'];
    const withCert = [
      `--endpoints=https://127.0.0.1:${port}`,
      `--cacert=${admin.caFile}`,
      `--cert=${admin.certFile}`,
      `--key=${admin.keyFile}`,
    ];
    // Neither refused put reached the store.
    expect(await etcdctl([...withCert, ...get])).toEqual({ code: 0, out: '' });
  });
});

describe('the store credentials', () => {
  it('names the setting of an unreadable certificate file', async () => {
    const tls = { ...etcd.pki!.files('admin'), keyFile: join(etcd.dir, 'missing.key') };
    await expect(Store.connect({ endpoints: [etcd.endpoint], tls })).rejects.toThrow(
      /Cannot read VTL_ETCD_KEY_FILE=.*missing\.key \(ENOENT\)/,
    );
  });
});

describe('the TLS server name of a loopback etcd', () => {
  it('is localhost, never an IP address (RFC 6066), and nothing else is renamed', () => {
    expect(loopbackServerName(['https://127.0.0.1:2379', 'https://[::1]:2379'])).toEqual({
      'grpc.ssl_target_name_override': 'localhost',
    });
    expect(loopbackServerName(['https://10.0.0.5:2379'])).toEqual({});
    expect(loopbackServerName(['https://127.0.0.1:2379', 'https://etcd-1:2379'])).toEqual({});
  });
});
