import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type http from 'node:http';
import { freePort } from '@vtl/store/testing';
import { healthSettingsFromEnv, serveHealth } from './health-server.js';

describe('serveHealth (VTL_HEALTH_PORT)', () => {
  let server: http.Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));
  const log = pino({ level: 'silent' });

  it('listens nowhere unless asked, and refuses a bad port', async () => {
    expect(await serveHealth({ ping: async () => true }, log, healthSettingsFromEnv({}))).toBeUndefined();
    expect(() => healthSettingsFromEnv({ VTL_HEALTH_PORT: 'x' })).toThrow(
      /VTL_HEALTH_PORT must be a port number/,
    );
  });

  it('answers /healthz while etcd is down and /readyz only when etcd answers', async () => {
    let etcdUp = false;
    const port = await freePort();
    server = await serveHealth(
      { ping: async () => etcdUp },
      log,
      healthSettingsFromEnv({ VTL_HEALTH_PORT: String(port), VTL_HEALTH_BIND: '127.0.0.1' }),
    );
    const get = (p: string) => fetch(`http://127.0.0.1:${port}${p}`).then((r) => r.status);
    expect(await get('/healthz')).toBe(200);
    expect(await get('/readyz')).toBe(503);
    etcdUp = true;
    expect(await get('/readyz')).toBe(200);
    expect(await get('/other')).toBe(404);
  });
});
