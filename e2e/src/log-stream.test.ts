import https from 'node:https';
import { afterAll, describe, expect, it } from 'vitest';
import { Appliance } from './harness/appliance.js';
import { badLogLines, duplicateKeys } from './harness/json-lines.js';

/** One HTTPS request with its own headers; the appliance's certificate is self-signed. */
function call(
  app: Appliance,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; requestId: string | undefined }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      `https://127.0.0.1:${app.ports.https}${path}`,
      {
        method,
        rejectUnauthorized: false,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            requestId: res.headers['x-request-id'] as string | undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const lines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('`npm start` piped: the log stream', () => {
  let app: Appliance | undefined;
  afterAll(async () => {
    await app?.destroy();
  });

  it('is one JSON object per line without repeated keys; request lines carry the id and the principal', async () => {
    app = await Appliance.start({ command: ['npm', 'start'] });
    const auth = { authorization: `Bearer ${app.api.token}` };
    let given, made, fast;
    try {
      // A client's id is kept and returned; a refused write by a known principal is logged with it.
      given = await call(app, 'POST', '/api/pools', { ...auth, 'x-request-id': 'trace-42' }, {});
      // Without one (or with one that is not plain), the appliance makes a fresh UUID.
      made = await call(app, 'GET', '/api/status', { 'x-request-id': 'not plain' });
      // A read served from the view cache's fast path returns an id too.
      fast = await call(app, 'GET', '/api/status', { ...auth, 'x-request-id': 'fast-1' });
    } finally {
      await app.stop();
    }
    expect(given).toEqual({ status: 400, requestId: 'trace-42' });
    expect(made.status).toBe(401);
    expect(made.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(fast).toEqual({ status: 200, requestId: 'fast-1' });

    expect(badLogLines(app.stdout)).toEqual([]);
    const log = lines(app.stdout);
    expect(log[0], 'the build says what it did in one line, first').toMatchObject({ name: 'build' });
    expect(log.filter((l) => l.name === 'build')).toHaveLength(1);
    const request = (id: string) => log.find((l) => l.reqId === id && l.msg === 'request completed');
    expect(request('trace-42')).toMatchObject({
      principal: 'admin',
      statusCode: 400,
      req: { method: 'POST' },
    });
    expect(request(made.requestId!)).toMatchObject({ statusCode: 401 });
    expect(request(made.requestId!)).not.toHaveProperty('principal');
    expect(app.stdout).not.toMatch(/FSTDEP|MaxListenersExceeded|DeprecationWarning/);
    for (const name of ['appliance', 'apiserver', 'controller', 'nodeagent'])
      expect(
        log.some((l) => l.name === name),
        `${name} logs in the stream`,
      ).toBe(true);
  }, 240_000);

  it('a second start with nothing changed rebuilds nothing and says so', async () => {
    await app!.boot();
    await app!.stop();
    expect(badLogLines(app!.stdout)).toEqual([]);
    const [build] = lines(app!.stdout);
    expect(build).toMatchObject({ name: 'build', rebuilt: [] });
    expect(build!.msg).toMatch(/^build up to date/);
  }, 240_000);
});

describe('duplicateKeys', () => {
  it('finds a key repeated in any object, and none in arrays or strings', () => {
    expect(duplicateKeys('{"a":1,"b":{"c":1,"c":2},"a":"x"}').sort()).toEqual(['a', 'c']);
    expect(duplicateKeys('{"a":[{"b":1},{"b":2}],"s":"\\"a\\":1,\\"a\\":2"}')).toEqual([]);
  });
});
