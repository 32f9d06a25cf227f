import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

export interface ApiAnswer {
  status: number;
  body: unknown;
}

/**
 * POSTs JSON to the apiserver over HTTPS, trusting exactly the apiserver's own certificate (its
 * SHA-256 fingerprint, pinned from the certificate file), so a self-signed appliance certificate
 * needs no CA and nothing else can answer in its place.
 */
export async function postJson(
  url: string,
  certPem: string,
  token: string,
  body: unknown,
  timeoutMs: number,
): Promise<ApiAnswer> {
  const pinned = new X509Certificate(certPem).fingerprint256;
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: 'POST',
        rejectUnauthorized: false, // replaced by the pin below
        agent: false, // a fresh connection, so the pin is checked on every request
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': String(payload.length),
        },
        timeout: timeoutMs,
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerCertificate();
        if (peer.fingerprint256 !== pinned) {
          res.destroy();
          reject(
            new Error(`${url} presented a certificate other than the apiserver's (${pinned.slice(0, 23)}…)`),
          );
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    // Nothing is written (no header, no token) until the peer has shown the pinned certificate.
    req.on('socket', (socket) =>
      socket.once('secureConnect', () => {
        const peer = (socket as TLSSocket).getPeerCertificate();
        if (peer.fingerprint256 !== pinned)
          req.destroy(
            new Error(`${url} presented a certificate other than the apiserver's; nothing was sent`),
          );
        else req.end(payload);
      }),
    );
    req.on('timeout', () => req.destroy(new Error(`${url} did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}
