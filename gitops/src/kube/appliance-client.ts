import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { KubeAdapterConfig } from './config.js';

/** An error answer of the appliance: its status and the API's error body. */
export class ApplianceError extends Error {
  readonly code = 'APPLIANCE_REQUEST_FAILED';
  constructor(
    readonly status: number,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApplianceError';
  }
}

/**
 * The appliance's REST API as the adapter uses it: JSON in and out, an admin API key or a
 * session from a login (renewed once on 401). Credentials never reach a log or an error.
 */
export class ApplianceClient {
  private readonly agent: http.Agent;
  private session: string | undefined;

  constructor(private readonly config: KubeAdapterConfig) {
    this.agent = config.apiUrl.startsWith('https:')
      ? new https.Agent({
          keepAlive: true,
          rejectUnauthorized: !config.apiInsecure,
          ...(config.apiCaFile ? { ca: fs.readFileSync(config.apiCaFile) } : {}),
        })
      : new http.Agent({ keepAlive: true });
  }

  close(): void {
    this.agent.destroy();
  }

  // Bodies are the REST shapes of docs/api.md and docs/gitops.md, read per endpoint.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async request(method: string, path: string, body?: unknown, timeoutMs = 60_000): Promise<any> {
    const token = this.config.apiKey ?? (this.session ??= await this.login());
    const res = await this.send(method, path, body, token, timeoutMs);
    if (res.status === 401 && !this.config.apiKey) {
      this.session = await this.login();
      return this.check(method, path, await this.send(method, path, body, this.session, timeoutMs));
    }
    return this.check(method, path, res);
  }

  private check(method: string, path: string, res: { status: number; body: unknown }) {
    if (res.status < 400) return res.body;
    const error = (res.body as { error?: { message?: string; details?: unknown } } | undefined)?.error;
    throw new ApplianceError(
      res.status,
      error?.message ?? `${method} ${path} answered ${res.status}`,
      error?.details,
    );
  }

  private async login(): Promise<string> {
    const res = await this.send('POST', '/api/auth/login', {
      username: this.config.apiUsername,
      password: this.config.apiPassword,
    });
    const body = this.check('POST', '/api/auth/login', res) as { token: string };
    return body.token;
  }

  private send(
    method: string,
    path: string,
    body: unknown,
    token?: string,
    timeoutMs = 60_000,
  ): Promise<{ status: number; body: unknown }> {
    const url = new URL(path, this.config.apiUrl);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload)
      Object.assign(headers, {
        'content-type': 'application/json',
        'content-length': String(payload.length),
      });
    if (token) headers.authorization = `Bearer ${token}`;
    const lib = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(url, { method, headers, agent: this.agent, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // A proxy's page: kept as text.
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      });
      req.on('timeout', () =>
        req.destroy(new Error(`${method} ${url.pathname}: no answer within ${timeoutMs} ms`)),
      );
      req.on('error', reject);
      req.end(payload);
    });
  }
}
