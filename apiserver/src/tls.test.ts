import fs from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsOptions, loadCertificate } from './tls.js';

/** The operator's own certificate (an RSA one, as most CAs still issue) served with the suite policy. */
describe('HTTPS certificate and suites', () => {
  let dir: string;
  let certFile: string;
  let keyFile: string;
  let operator: { cert: string; private: string };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-tls-'));
    operator = await selfsigned.generate([{ name: 'commonName', value: 'vtl.example.com' }], {
      keyType: 'rsa',
      keySize: 2048,
      algorithm: 'sha256',
    });
    certFile = path.join(dir, 'operator.crt');
    keyFile = path.join(dir, 'operator.key');
    await fs.writeFile(certFile, operator.cert);
    await fs.writeFile(keyFile, operator.private, { mode: 0o600 });
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('serves the operator pair when VTL_TLS_CERT_FILE and VTL_TLS_KEY_FILE are set, AEAD suites only', async () => {
    const pair = await loadCertificate({ stateDir: dir, tlsCertFile: certFile, tlsKeyFile: keyFile }, [
      'localhost',
    ]);
    expect(pair.cert).toBe(operator.cert);
    // No self-signed pair is made when the operator brings one.
    await expect(fs.access(path.join(dir, 'tls'))).rejects.toThrow();
    const server = https.createServer(httpsOptions(pair), (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const connect = (opts: tls.ConnectionOptions) =>
      new Promise<{ cipher?: string; subject?: string; error?: string }>((resolve) => {
        const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...opts }, () => {
          resolve({
            cipher: s.getCipher().standardName,
            subject: String(s.getPeerCertificate().subject?.CN),
          });
          s.destroy();
        });
        s.on('error', (err) => resolve({ error: err.message }));
      });
    try {
      expect(await connect({ maxVersion: 'TLSv1.2' })).toEqual({
        cipher: expect.stringMatching(/^TLS_ECDHE_RSA_WITH_(AES_\d+_GCM_SHA\d+|CHACHA20_POLY1305_SHA256)$/),
        subject: 'vtl.example.com',
      });
      const cbc = await connect({
        maxVersion: 'TLSv1.2',
        ciphers: 'ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:AES128-SHA:AES128-SHA256@SECLEVEL=0',
      });
      expect(cbc.error).toMatch(/handshake failure|alert/i);
      expect((await connect({ minVersion: 'TLSv1.3' })).cipher).toMatch(/^TLS_/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('says what is wrong with a half-set, unreadable or mismatched pair', async () => {
    await expect(loadCertificate({ stateDir: dir, tlsCertFile: certFile }, [])).rejects.toThrow(
      /Set both VTL_TLS_CERT_FILE and VTL_TLS_KEY_FILE/,
    );
    await expect(
      loadCertificate({ stateDir: dir, tlsCertFile: path.join(dir, 'missing.crt'), tlsKeyFile: keyFile }, []),
    ).rejects.toThrow(/Cannot read the TLS certificate .*missing\.crt \(ENOENT\)/);
    const other = await selfsigned.generate([{ name: 'commonName', value: 'other' }], {
      keyType: 'ec',
      curve: 'P-256',
    });
    const otherKey = path.join(dir, 'other.key');
    await fs.writeFile(otherKey, other.private);
    await expect(
      loadCertificate({ stateDir: dir, tlsCertFile: certFile, tlsKeyFile: otherKey }, []),
    ).rejects.toThrow(/do not form a usable pair/);
  });
});
