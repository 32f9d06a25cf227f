import fs from 'node:fs/promises';
import { execFile } from 'node:child_process';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { waitFor } from '@vtl/reconcile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appliance } from './harness/appliance.js';

/** A response read off a raw TLS socket: what any client, not only a well-behaved one, gets. */
interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
  text: string;
}

/** Sends bytes as they are over TLS and reads the answer until the server closes or it is complete. */
function rawRequest(port: number, request: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () =>
      socket.write(request),
    );
    const chunks: Buffer[] = [];
    const finish = () => {
      const all = Buffer.concat(chunks).toString('utf8');
      const split = all.indexOf('\r\n\r\n');
      if (split < 0) return false;
      const [statusLine, ...lines] = all.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const text = all.slice(split + 4);
      const length = Number(headers['content-length'] ?? NaN);
      if (Number.isFinite(length) && Buffer.byteLength(text) < length) return false;
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      resolve({ status: Number(statusLine?.split(' ')[1]), headers, body, text });
      socket.destroy();
      return true;
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      finish();
    });
    socket.on('end', () => finish() || reject(new Error(`no complete response: ${Buffer.concat(chunks)}`)));
    socket.on('error', (err) => finish() || reject(err));
  });
}

/** A full HTTP/1.1 request with the bearer token. */
function httpRequest(
  method: string,
  target: string,
  token: string,
  opts: { headers?: Record<string, string>; body?: Buffer | string } = {},
): string | Buffer {
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
  const headers: Record<string, string> = {
    host: '127.0.0.1',
    connection: 'close',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(body ? { 'content-length': String(body.length) } : {}),
    ...opts.headers,
  };
  const head = `${method} ${target} HTTP/1.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  return body ? Buffer.concat([Buffer.from(head), body]) : head;
}

/** Whether a TLS handshake with these client settings completes; the error when it does not. */
function handshake(
  port: number,
  opts: tls.ConnectionOptions,
): Promise<{ cipher?: string; subject?: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...opts }, () => {
      resolve({
        cipher: socket.getCipher().standardName,
        subject: String(socket.getPeerCertificate().subject?.CN),
      });
      socket.destroy();
    });
    socket.on('error', (err) => resolve({ error: err.message }));
  });
}

/** The pool rows without their live figures, which the nodeagent refreshes every few seconds. */
const poolRows = async (app: Appliance) =>
  (await app.api.get('/api/pools')).body.map(({ id, name, node, path: p, created_at }: any) => ({
    id,
    name,
    node,
    path: p,
    created_at,
  }));

const mode = async (p: string) => (await fs.stat(p)).mode & 0o777;

/** The documented error body (docs/api.md "Error body") with the code this refusal has. */
function expectErrorBody(res: RawResponse | { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(res.body.error).toMatchObject({ code, message: expect.any(String) });
  expect(res.body.error.message.length).toBeGreaterThan(10);
}

describe('issue 12: no credential in a log, pools off the system, TLS policy, input hygiene', () => {
  let app: Appliance;
  let token: string;
  let stateDir: string;
  let certDir: string | undefined;

  beforeAll(async () => {
    // A state dir an older version left behind: logs world-readable. The start tightens them.
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-e2e-'));
    await fs.mkdir(path.join(stateDir, 'logs'), { mode: 0o755 });
    await fs.chmod(path.join(stateDir, 'logs'), 0o755);
    await fs.writeFile(path.join(stateDir, 'logs', 'apiserver.log'), '', { mode: 0o644 });
    await fs.chmod(path.join(stateDir, 'logs', 'apiserver.log'), 0o644);
    // The operator brings an RSA certificate (VTL_TLS_CERT_FILE / VTL_TLS_KEY_FILE), kept outside the state dir.
    certDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-e2e-cert-'));
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=vtl.example.com',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      path.join(certDir, 'key.pem'),
      '-out',
      path.join(certDir, 'cert.pem'),
    ]);
    app = await Appliance.start({
      stateDir,
      env: {
        VTL_TLS_CERT_FILE: path.join(certDir, 'cert.pem'),
        VTL_TLS_KEY_FILE: path.join(certDir, 'key.pem'),
        // Successful reads are logged at debug: the redaction is checked on every line a request can write.
        VTL_LOG_LEVEL: 'debug',
      },
    });
    token = app.api.token;
  });
  afterAll(async () => {
    await app?.destroy();
    if (certDir) await fs.rm(certDir, { recursive: true, force: true });
  });

  it('keeps a token sent in the query string out of the log, and the logs private', async () => {
    const refused = await app.anonymous.get(`/api/status?token=${token}`);
    expectErrorBody(refused, 401, 'unauthorized');
    const marker = `marker${Date.now()}`;
    expect((await app.api.get(`/api/status?${marker}=${token}&token=${token}`)).status).toBe(200);
    const log = path.join(stateDir, 'logs', 'apiserver.log');
    await waitFor(async () => (await fs.readFile(log, 'utf8')).includes(marker), { timeoutMs: 10_000 });
    const text = await fs.readFile(log, 'utf8');
    expect(text).toContain(`/api/status?${marker}=[redacted]&token=[redacted]`);
    expect(text).toContain('/api/status?token=[redacted]');
    for (const name of await fs.readdir(path.join(stateDir, 'logs')))
      expect(await fs.readFile(path.join(stateDir, 'logs', name), 'utf8')).not.toContain(token);

    expect(await mode(path.join(stateDir, 'logs'))).toBe(0o700);
    const files = await fs.readdir(path.join(stateDir, 'logs'));
    expect(files).toEqual(
      expect.arrayContaining(['apiserver.log', 'etcd.log', 'controller.log', 'nodeagent.log']),
    );
    for (const name of files) expect(await mode(path.join(stateDir, 'logs', name)), name).toBe(0o600);
  });

  it('refuses pools over the state dir and the system, saying why, and creates nothing', async () => {
    const before = await poolRows(app);
    const eventsBefore = (await app.api.get('/api/events/search?kind=pool_created')).body.length;
    const link = path.join(os.tmpdir(), `vtl-e2e-link-${process.pid}`);
    await fs.rm(link, { force: true });
    await fs.symlink(path.join(stateDir, 'etcd'), link);
    try {
      const cases: Array<[string, string, RegExp]> = [
        ['the etcd data dir', path.join(stateDir, 'etcd'), /state directory/],
        ['a new dir in the etcd data dir', path.join(stateDir, 'etcd', 'pool'), /state directory/],
        ['the state dir', stateDir, /state directory/],
        ['.. out of the pool area', `${stateDir}/pools/../logs`, /resolves to .*state directory/],
        ['a symlink to the etcd dir', path.join(link, 'x'), /resolves to .*state directory/],
        [
          'a parent of the state dir',
          path.dirname(stateDir),
          /contains the appliance's state directory|system directory/,
        ],
        ['/etc', '/etc', /system directory/],
        ['inside /etc', '/etc/vtl-pool', /system directory \/etc/],
        ['/', '/', /system directory/],
        ['/proc', '/proc/self', /system directory \/proc/],
        ['/usr', '/usr', /system directory/],
        ['/run', '/run/vtl', /system directory \/run/],
      ];
      // The default pool sits in the state dir's pool area; a symlink to it overlaps it.
      const toDefault = path.join(os.tmpdir(), `vtl-e2e-link-pool-${process.pid}`);
      await fs.rm(toDefault, { force: true });
      await fs.symlink(path.join(stateDir, 'pool'), toDefault);
      cases.push(['a symlink to the default pool', toDefault, /resolves to .*overlaps pool/]);
      for (const [what, p, why] of cases) {
        const res = await app.api.post('/api/pools', { name: 'evil', path: p });
        expectErrorBody(res, 400, 'bad_request');
        expect(res.body.error.message, what).toMatch(why);
      }
    } finally {
      await fs.rm(link, { force: true });
      await fs.rm(path.join(os.tmpdir(), `vtl-e2e-link-pool-${process.pid}`), { force: true });
    }
    expect(await poolRows(app)).toEqual(before);
    expect((await app.api.get('/api/events/search?kind=pool_created')).body.length).toBe(eventsBefore);
    await expect(fs.access('/etc/vtl-pool')).rejects.toThrow();
    await expect(fs.access(path.join(stateDir, 'etcd', 'pool'))).rejects.toThrow();
  });

  it('speaks TLS 1.3 and TLS 1.2 with AEAD suites only: a CBC-SHA1 offer is refused', async () => {
    const port = app.ports.https;
    const cbc = await handshake(port, {
      maxVersion: 'TLSv1.2',
      // SECLEVEL=0 so the client really offers the SHA-1 suites; the refusal must be the server's.
      ciphers:
        'ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:AES128-SHA:AES256-SHA@SECLEVEL=0',
    });
    expect(cbc.cipher).toBeUndefined();
    expect(cbc.error).toMatch(/handshake failure|no shared cipher|alert/i);
    const cbc256 = await handshake(port, {
      maxVersion: 'TLSv1.2',
      ciphers: 'ECDHE-ECDSA-AES128-SHA256@SECLEVEL=0',
    });
    expect(cbc256.cipher).toBeUndefined();
    const old = await handshake(port, {
      minVersion: 'TLSv1',
      maxVersion: 'TLSv1.1',
      ciphers: 'DEFAULT@SECLEVEL=0',
    });
    expect(old.cipher).toBeUndefined();

    const gcm = await handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' });
    expect(gcm).toEqual({ cipher: 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', subject: 'vtl.example.com' });
    const chacha = await handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-CHACHA20-POLY1305' });
    expect(chacha.cipher).toBe('TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256');
    // Static RSA key exchange (no forward secrecy) is refused even with GCM.
    expect(
      (await handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256' })).cipher,
    ).toBeUndefined();
    const v13 = await handshake(port, { minVersion: 'TLSv1.3' });
    expect(v13.cipher).toMatch(/^TLS_(AES_256_GCM_SHA384|AES_128_GCM_SHA256|CHACHA20_POLY1305_SHA256)$/);

    // openssl s_client, a client outside Node, sees the same.
    const sClient = (args: string[]) =>
      new Promise<string>((resolve) => {
        const child = execFile(
          'openssl',
          ['s_client', '-connect', `127.0.0.1:${port}`, ...args],
          (_e, out, err) => resolve(out + err),
        );
        child.stdin?.end('');
      });
    const out = await sClient(['-tls1_2', '-cipher', 'ECDHE-RSA-AES128-SHA:AES128-SHA@SECLEVEL=0']);
    expect(out).toMatch(/handshake failure|alert/i);
    expect(out).not.toMatch(/Cipher is (ECDHE-RSA-)?AES128-SHA/);
    expect(await sClient(['-tls1_2', '-cipher', 'ECDHE-RSA-AES256-GCM-SHA384'])).toMatch(
      /Cipher is ECDHE-RSA-AES256-GCM-SHA384/,
    );
  });

  it('sends HSTS and nosniff on every response and no-store on the API', async () => {
    const login = await app.anonymous.post('/api/auth/login', {
      username: 'admin',
      password: app.adminPassword,
    });
    const key = await app.api.post('/api/apikeys', { name: 'hdr', role: 'read-only' });
    const health = await app.anonymous.get('/healthz');
    const refused = await app.anonymous.get('/api/status');
    const missing = await app.api.get('/api/nowhere');
    for (const [what, res] of Object.entries({ login, key, health, refused, missing })) {
      expect(res.headers['strict-transport-security'], what).toMatch(/^max-age=\d{7,}/);
      expect(res.headers['x-content-type-options'], what).toBe('nosniff');
    }
    for (const [what, res] of Object.entries({ login, key, refused, missing }))
      expect(res.headers['cache-control'], what).toBe('no-store');
    expect(login.status).toBe(200);
    expect(key.status).toBe(201);
    // The event stream writes its own head (hijacked reply): it carries them too.
    const stream = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = https.get(
        `https://127.0.0.1:${app.ports.https}/api/events`,
        { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false },
        (res) => {
          resolve(res.headers);
          req.destroy();
        },
      );
      req.on('error', reject);
    });
    expect(stream).toMatchObject({
      'content-type': expect.stringMatching(/^text\/event-stream/),
      'strict-transport-security': expect.stringMatching(/^max-age=/),
      'x-content-type-options': 'nosniff',
      'cache-control': expect.stringMatching(/no-store|no-cache/),
    });
    // The plaintext listener: nosniff too; HSTS means nothing over HTTP.
    const plain = await app.plain.get('/healthz');
    expect(plain.headers['x-content-type-options']).toBe('nosniff');
  });

  it('refuses control characters and markup in an alias, leaving the registry unchanged', async () => {
    const before = (await app.api.get('/api/targets')).body.initiators;
    for (const alias of [
      'a\u0000b',
      'host\r\nX-Injected: 1',
      '<x>',
      'tab\there',
      'c1\u0085x',
      'del\u007f',
      'x'.repeat(65),
    ]) {
      const res = await app.api.post('/api/targets/acls', {
        wwpn: 'iqn.2026-11.com.example:evil',
        fabric: 'iscsi',
        alias,
      });
      expectErrorBody(res, 400, 'validation_failed');
      expect(res.body.error.message).toMatch(/alias/);
    }
    expect((await app.api.get('/api/targets')).body.initiators).toEqual(before);
    const ok = await app.api.post('/api/targets/acls', {
      wwpn: 'iqn.2026-11.com.example:fine',
      fabric: 'iscsi',
      alias: 'Backup host — rack 2',
    });
    expect(ok.status, ok.text).toBe(200);
    const put = await app.api.put('/api/targets/acls/iqn.2026-11.com.example:fine', { alias: 'x\ny' });
    expect(put.status).toBe(400);
    expect(
      (await app.api.get('/api/targets')).body.initiators.find((i: any) => i.wwpn.endsWith(':fine')).alias,
    ).toBe('Backup host — rack 2');
    expect((await app.api.delete('/api/targets/acls/iqn.2026-11.com.example:fine')).status).toBe(200);
  });

  it('refuses remote endpoints that are not host[:port] or an http(s) URL', async () => {
    const remote = { name: 'r', bucket: 'b', access_key: 'AKIAEXAMPLE', secret_key: 'secret-key-example-1' };
    for (const endpoint of [
      '..',
      'NaN',
      '1',
      '1.2.3',
      'host:0',
      'host:99999',
      'ftp://h.example',
      'https://h.example/path',
      'a b',
      'h.exa\nmple',
    ]) {
      const res = await app.api.post('/api/remotes', { ...remote, endpoint });
      expect(res.status, `${endpoint}: ${res.text}`).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.message).toMatch(/endpoint/);
    }
    const name = await app.api.post('/api/remotes', { ...remote, name: 'evil\u0000name' });
    expect(name.status).toBe(400);
    expect((await app.api.get('/api/remotes')).body).toEqual([]);

    const url = await app.api.post('/api/remotes', { ...remote, endpoint: 'http://S3.Example.com:9000/' });
    expect(url.status, url.text).toBe(201);
    expect(url.body).toMatchObject({ endpoint: 'S3.Example.com:9000', use_ssl: false });
    const named = await app.api.put(`/api/remotes/${url.body.id}`, { endpoint: 'minio:9000' });
    expect(named.body).toMatchObject({ endpoint: 'minio:9000', use_ssl: false });
    expect((await app.api.put(`/api/remotes/${url.body.id}`, { endpoint: 'NaN' })).status).toBe(400);
    expect((await app.api.get(`/api/remotes/${url.body.id}`)).body.endpoint).toBe('minio:9000');
    expect((await app.api.delete(`/api/remotes/${url.body.id}`)).status).toBe(200);
  });

  it('reads JSON bodies strictly: objects only, UTF-8 only, no BOM; nothing is created', async () => {
    const port = app.ports.https;
    const before = await poolRows(app);
    const post = (body: Buffer | string, contentType = 'application/json') =>
      rawRequest(
        port,
        httpRequest('POST', '/api/pools', token, { headers: { 'content-type': contentType }, body }),
      );
    for (const body of ['null', '[]', '[{"name":"x","path":"/srv/x"}]', '5', '"x"', 'true']) {
      const res = await post(body);
      expectErrorBody(res, 400, 'bad_request');
      expect(res.body.error.message).toMatch(/must be a JSON object/);
    }
    const utf16 = await post(
      Buffer.from('{"name":"u16","path":"/srv/u16"}', 'utf16le'),
      'application/json; charset=utf-16',
    );
    expectErrorBody(utf16, 415, 'unsupported_media_type');
    expect(utf16.body.error.message).toMatch(/UTF-8/);
    const latin1 = await post('{"name":"l1","path":"/srv/l1"}', 'application/json; charset=ISO-8859-1');
    expectErrorBody(latin1, 415, 'unsupported_media_type');
    const bom = await post(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"bom","path":"/srv/bom"}')]),
    );
    expectErrorBody(bom, 400, 'bad_request');
    expect(bom.body.error.message).toMatch(/byte order mark/);
    const invalid = await post(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]));
    expectErrorBody(invalid, 400, 'bad_request');
    expect(invalid.body.error.message).toMatch(/UTF-8/);
    expectErrorBody(await post('{"name":'), 400, 'bad_request');
    expectErrorBody(await post('{"name":"x"}', 'application/xml'), 415, 'unsupported_media_type');
    expectErrorBody(await post('{"name":"x"}', 'text/plain'), 415, 'unsupported_media_type');
    expect(await poolRows(app)).toEqual(before);
  });

  it('answers every refusal of the HTTP layer in the documented error body', async () => {
    const port = app.ports.https;
    const check = (res: RawResponse, status: number, code: string) => {
      expectErrorBody(res, status, code);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['strict-transport-security']).toMatch(/^max-age=/);
    };
    const big = Buffer.from(JSON.stringify({ name: 'big', path: '/srv/big', pad: 'x'.repeat(1_100_000) }));
    check(
      await rawRequest(
        port,
        httpRequest('POST', '/api/pools', token, {
          headers: { 'content-type': 'application/json' },
          body: big,
        }),
      ),
      413,
      'payload_too_large',
    );
    check(
      await rawRequest(port, httpRequest('GET', `/api/status?q=${'a'.repeat(9000)}`, token)),
      414,
      'uri_too_long',
    );
    check(
      await rawRequest(port, httpRequest('GET', `/api/status?q=${'a'.repeat(20_000)}`, token)),
      414,
      'uri_too_long',
    );
    check(
      await rawRequest(
        port,
        httpRequest('GET', '/api/status', token, { headers: { 'x-filler': 'a'.repeat(20_000) } }),
      ),
      431,
      'headers_too_large',
    );
    check(await rawRequest(port, httpRequest('BREW', '/api/pools', token)), 405, 'method_not_allowed');
    check(await rawRequest(port, httpRequest('CONNECT', '127.0.0.1:22', token)), 405, 'method_not_allowed');
    check(await rawRequest(port, httpRequest('PATCH', '/api/pools', token)), 404, 'not_found');
    check(await rawRequest(port, httpRequest('GET', '/api/nowhere?token=abc', token)), 404, 'not_found');
    // The long query's value never reaches the log either.
    expect(await fs.readFile(path.join(stateDir, 'logs', 'apiserver.log'), 'utf8')).not.toContain(
      'a'.repeat(9000),
    );
    expect((await app.api.get('/api/pools')).body.map((p: any) => p.name)).not.toContain('big');
  });

  it('still refuses every request without credentials', async () => {
    for (const [method, p] of [
      ['GET', '/api/status'],
      ['POST', '/api/pools'],
      ['POST', '/api/targets/acls'],
      ['POST', '/api/remotes'],
    ] as const)
      expectErrorBody(await rawRequest(app.ports.https, httpRequest(method, p, '')), 401, 'unauthorized');
  });
});
