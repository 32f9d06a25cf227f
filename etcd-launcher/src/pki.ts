import { webcrypto } from 'node:crypto';
import fs from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import type * as X509 from '@peculiar/x509';
import type { TlsFiles } from './tls-files.js';

/**
 * The appliance's small private CA for its etcd, under $VTL_STATE_DIR/pki: a CA, one server
 * certificate for etcd (client and peer traffic) and one client certificate per process.
 * Made with @peculiar/x509 on Node's WebCrypto (ECDSA P-256), so no openssl binary is needed.
 */
export const PKI_IDENTITIES = ['etcd', 'apiserver', 'controller', 'nodeagent', 'admin'] as const;
export type PkiIdentity = (typeof PKI_IDENTITIES)[number];

export interface Pki {
  dir: string;
  caFile: string;
  /** The CA file, the certificate and the key of one identity (what Store.connect's tls takes). */
  files(identity: PkiIdentity): TlsFiles;
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;
const CA_DAYS = 3650;
const LEAF_DAYS = 825;
/** A leaf certificate closer than this to its end is issued again at the next start. */
const RENEW_BEFORE_MS = 30 * DAY_MS;

/**
 * @peculiar/x509, loaded by the first ensurePki: only the appliance's launcher and the tests make
 * certificates, and every other process that imports the store would otherwise carry the library
 * (a few MB of heap each) for nothing.
 */
let x509: typeof X509;
let loading: Promise<void> | undefined;
const loadX509 = () =>
  (loading ??= import('@peculiar/x509').then((lib) => {
    lib.cryptoProvider.set(webcrypto as unknown as Parameters<typeof lib.cryptoProvider.set>[0]);
    x509 = lib;
  }));

/** Opens the PKI in dir, creating what is missing (directory 0700, keys 0600). */
export async function ensurePki(dir: string, opts: { hosts?: string[] } = {}): Promise<Pki> {
  await loadX509();
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.chmod(dir, 0o700);
  const caFile = path.join(dir, 'ca.crt');
  const caKeyFile = path.join(dir, 'ca.key');
  let ca = await load(caFile, caKeyFile);
  if (!ca) {
    const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serial(),
      name: 'CN=VTL appliance etcd CA',
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + CA_DAYS * DAY_MS),
      keys,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    await save(caFile, caKeyFile, cert, keys.privateKey);
    ca = { cert, privateKey: keys.privateKey };
  }
  const hosts = [...new Set(['127.0.0.1', '::1', 'localhost', ...(opts.hosts ?? [])])];
  for (const identity of PKI_IDENTITIES) {
    const certFile = path.join(dir, `${identity}.crt`);
    const keyFile = path.join(dir, `${identity}.key`);
    if (await stillGood(certFile, keyFile, ca.cert)) continue;
    const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
    const server = identity === 'etcd';
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=vtl-${identity}`,
      issuer: ca.cert.subject,
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + LEAF_DAYS * DAY_MS),
      publicKey: keys.publicKey,
      signingKey: ca.privateKey,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
          true,
        ),
        // etcd's own certificate serves clients and peers and is a client of its peers.
        new x509.ExtendedKeyUsageExtension(
          server
            ? [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]
            : [x509.ExtendedKeyUsage.clientAuth],
        ),
        ...(server
          ? [
              new x509.SubjectAlternativeNameExtension(
                hosts.map((h) =>
                  isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h },
                ),
              ),
            ]
          : []),
        await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
      ],
    });
    await save(certFile, keyFile, cert, keys.privateKey);
  }
  return {
    dir,
    caFile,
    files: (identity) => ({
      caFile,
      certFile: path.join(dir, `${identity}.crt`),
      keyFile: path.join(dir, `${identity}.key`),
    }),
  };
}

const serial = () =>
  Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');

async function load(
  certFile: string,
  keyFile: string,
): Promise<{ cert: X509.X509Certificate; privateKey: webcrypto.CryptoKey } | undefined> {
  const [certPem, keyPem] = await Promise.all([
    fs.readFile(certFile, 'utf8').catch(() => undefined),
    fs.readFile(keyFile, 'utf8').catch(() => undefined),
  ]);
  if (!certPem || !keyPem) return undefined;
  const der = x509.PemConverter.decodeFirst(keyPem);
  const privateKey = await webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign']);
  return { cert: new x509.X509Certificate(certPem), privateKey };
}

/** A leaf is kept when both files exist, the current CA signed it and it is not about to expire. */
async function stillGood(certFile: string, keyFile: string, ca: X509.X509Certificate): Promise<boolean> {
  try {
    await fs.access(keyFile);
    const cert = new x509.X509Certificate(await fs.readFile(certFile, 'utf8'));
    if (cert.notAfter.getTime() - Date.now() < RENEW_BEFORE_MS) return false;
    return await cert.verify({ publicKey: ca, signatureOnly: true });
  } catch {
    return false;
  }
}

async function save(
  certFile: string,
  keyFile: string,
  cert: X509.X509Certificate,
  key: webcrypto.CryptoKey,
): Promise<void> {
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', key);
  const keyPem = x509.PemConverter.encode(pkcs8, 'PRIVATE KEY');
  // Key first, written 0600 from the start (never briefly readable), then its certificate.
  await fs.rm(keyFile, { force: true });
  await fs.writeFile(keyFile, `${keyPem}\n`, { mode: 0o600 });
  await fs.writeFile(certFile, `${cert.toString('pem')}\n`, { mode: 0o644 });
}
