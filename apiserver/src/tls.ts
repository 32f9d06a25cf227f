import fs from 'node:fs/promises';
import path from 'node:path';
import selfsigned from 'selfsigned';

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
