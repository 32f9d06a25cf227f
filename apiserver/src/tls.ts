import fs from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import { X509Certificate, createPrivateKey } from 'node:crypto';

/** The HTTPS key pair under the state directory; a self-signed one is made on first start. */
export async function ensureCertificate(
  stateDir: string,
  hostnames: string[],
): Promise<{ key: string; cert: string }> {
  const dir = path.join(stateDir, 'tls');
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  try {
    return { key: await fs.readFile(keyFile, 'utf8'), cert: await fs.readFile(certFile, 'utf8') };
  } catch {
    // First start: fall through and create the pair.
  }
  // Loaded here, on the first start only: the certificate library and its ASN.1 packages are some
  // 3 MB of heap an apiserver would otherwise keep for good (issue 13's idle memory).
  const { default: selfsigned } = await import('selfsigned');
  const pems = await selfsigned.generate([{ name: 'commonName', value: hostnames[0] ?? 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    notAfterDate: new Date(Date.now() + 10 * 365 * 86_400_000),
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: hostnames.map((h) =>
          /^[\d.]+$/.test(h) ? { type: 7 as const, ip: h } : { type: 2 as const, value: h },
        ),
      },
    ],
  });
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.writeFile(keyFile, pems.private, { mode: 0o600 });
  await fs.writeFile(certFile, pems.cert, { mode: 0o644 });
  return { key: pems.private, cert: pems.cert };
}

/**
 * TLS 1.3, and TLS 1.2 with forward-secret AEAD suites only (ECDHE with AES-GCM or
 * ChaCha20-Poly1305): no CBC, no SHA-1 MACs, no static RSA key exchange. ECDSA and RSA variants
 * both, so an operator's RSA certificate works as well as the self-signed EC one.
 */
export const TLS_CIPHERS = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_AES_128_GCM_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
].join(':');

/** How long a connection may take to finish its TLS handshake unless told otherwise. */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

/**
 * The HTTPS listener's options: the key pair plus the protocol and suite policy above, and a
 * handshake deadline: a connection that never sends its ClientHello (or stalls in the handshake)
 * is closed after `handshakeTimeoutMs` rather than held for good.
 */
export function httpsOptions(
  pair: { key: string; cert: string },
  handshakeTimeoutMs: number = TLS_HANDSHAKE_TIMEOUT_MS,
) {
  return {
    ...pair,
    minVersion: 'TLSv1.2' as const,
    ciphers: TLS_CIPHERS,
    honorCipherOrder: true,
    handshakeTimeout: handshakeTimeoutMs,
  };
}

/**
 * The operator's certificate pair when VTL_TLS_CERT_FILE and VTL_TLS_KEY_FILE are set (read at
 * start; restart the apiserver after replacing them), else the self-signed one of the state dir.
 */
export async function loadCertificate(
  config: { stateDir: string; tlsCertFile?: string; tlsKeyFile?: string },
  hostnames: string[],
): Promise<{ key: string; cert: string }> {
  const { tlsCertFile, tlsKeyFile } = config;
  if (!tlsCertFile && !tlsKeyFile) return ensureCertificate(config.stateDir, hostnames);
  if (!tlsCertFile || !tlsKeyFile)
    throw new Error(
      'Set both VTL_TLS_CERT_FILE and VTL_TLS_KEY_FILE (PEM certificate chain and its private key), or neither to use the self-signed certificate.',
    );
  const read = (file: string, what: string) =>
    fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new Error(
        `Cannot read the TLS ${what} ${file} (${err.code ?? err.message}); check the path and that the apiserver may read it.`,
      );
    });
  const pair = { cert: await read(tlsCertFile, 'certificate'), key: await read(tlsKeyFile, 'key') };
  // Fails here, with a clear message, rather than on the first handshake.
  let matches: boolean;
  try {
    tls.createSecureContext(pair);
    matches = new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key));
  } catch (err) {
    throw new Error(
      `The TLS certificate ${tlsCertFile} and key ${tlsKeyFile} do not form a usable pair (${(err as Error).message}).`,
    );
  }
  if (!matches)
    throw new Error(
      `The TLS certificate ${tlsCertFile} and key ${tlsKeyFile} do not form a usable pair (the key is not the certificate's).`,
    );
  return pair;
}
