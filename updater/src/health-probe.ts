import http from 'node:http';
import https from 'node:https';

/** Where the updater asks GET /healthz: the plaintext listener when enabled, else HTTPS. */
export interface ProbeTarget {
  bind: string;
  httpsPort: number;
  plainPort: number;
}

/** The `version` GET /healthz reports, or undefined while nothing (healthy) answers. */
export function healthVersion(t: ProbeTarget, timeoutMs = 2_000): Promise<string | undefined> {
  const host = t.bind === '0.0.0.0' || t.bind === '::' ? '127.0.0.1' : t.bind;
  const plain = t.plainPort !== 0;
  // The appliance's certificate may be self-signed; the probe reads a version, nothing secret.
  const get = plain ? http.get : https.get;
  const url = `${plain ? 'http' : 'https'}://${host}:${plain ? t.plainPort : t.httpsPort}/healthz`;
  return new Promise((resolve) => {
    const req = get(url, { timeout: timeoutMs, ...(plain ? {} : { rejectUnauthorized: false }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as { ok?: boolean; version?: string };
          resolve(res.statusCode === 200 && body.ok ? body.version : undefined);
        } catch {
          resolve(undefined);
        }
      });
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

/** Polls until /healthz reports `version` (true) or `until` (epoch ms) passes (false). */
export async function waitForVersion(t: ProbeTarget, version: string, until: number): Promise<boolean> {
  while (Date.now() < until) {
    if ((await healthVersion(t)) === version) return true;
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}
