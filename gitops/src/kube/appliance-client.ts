import type http from 'node:http';
import { answerError, jsonAgent, requestJson, type JsonAnswer } from '@vtl/api/json-http';
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
    this.agent = jsonAgent(config.apiUrl, {
      keepAlive: true,
      insecure: config.apiInsecure,
      caFile: config.apiCaFile,
    });
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

  private check(method: string, path: string, res: JsonAnswer) {
    if (res.status < 400) return res.body;
    const error = answerError(method, path, res);
    throw new ApplianceError(res.status, error.message, error.details);
  }

  private async login(): Promise<string> {
    const res = await this.send('POST', '/api/auth/login', {
      username: this.config.apiUsername,
      password: this.config.apiPassword,
    });
    const body = this.check('POST', '/api/auth/login', res) as { token: string };
    return body.token;
  }

  private send(method: string, path: string, body: unknown, token?: string, timeoutMs = 60_000) {
    return requestJson(this.config.apiUrl, method, path, body, { agent: this.agent, token, timeoutMs });
  }
}
