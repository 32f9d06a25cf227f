import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('apiserver config', () => {
  it('has a default for every setting', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      stateDir: path.resolve('var'),
      store: { endpoints: ['http://127.0.0.1:2379'], tls: undefined, deadlineMs: 5_000 },
      bind: '127.0.0.1',
      httpsPort: 8443,
      plainPort: 8080,
      opTimeoutMs: 120_000,
      sseKeepaliveMs: 20_000,
      sessionTtlSec: 12 * 3600,
    });
    expect(c.tlsCertFile).toBeUndefined();
    expect(c.machineIdFiles[0]).toBe('/etc/machine-id');
    // Where `npm run build -w @vtl/console` puts the console.
    expect(c.consoleDir).toBe(path.resolve(import.meta.dirname, '../../console/dist'));
  });

  it('reads every variable it documents', () => {
    const c = loadConfig({
      VTL_STATE_DIR: '/srv/vtl',
      VTL_ETCD_ENDPOINTS: 'http://a:2379,http://b:2379',
      VTL_BIND: '0.0.0.0',
      VTL_HTTPS_PORT: '9443',
      VTL_PLAIN_PORT: '0',
      VTL_OP_TIMEOUT_MS: '1000',
      VTL_SSE_KEEPALIVE_MS: '50',
      VTL_STORE_DEADLINE_MS: '700',
      VTL_SESSION_TTL_SEC: '60',
      VTL_TLS_CERT_FILE: '/etc/vtl/cert.pem',
      VTL_TLS_KEY_FILE: '/etc/vtl/key.pem',
      VTL_MACHINE_ID_FILE: '/etc/vtl/id',
      VTL_CONSOLE_DIR: '/srv/console',
    });
    expect(c).toMatchObject({
      stateDir: '/srv/vtl',
      store: {
        endpoints: ['http://a:2379', 'http://b:2379'],
        sealingKeyFile: '/srv/vtl/pki/sealing.key',
        deadlineMs: 700,
      },
      bind: '0.0.0.0',
      httpsPort: 9443,
      plainPort: 0,
      opTimeoutMs: 1000,
      sseKeepaliveMs: 50,
      sessionTtlSec: 60,
      tlsCertFile: '/etc/vtl/cert.pem',
      tlsKeyFile: '/etc/vtl/key.pem',
      machineIdFiles: ['/etc/vtl/id'],
      consoleDir: '/srv/console',
    });
  });

  it('refuses a malformed number, naming nothing secret', () => {
    expect(() => loadConfig({ VTL_HTTPS_PORT: 'https' })).toThrow(/non-negative integer/);
    expect(() => loadConfig({ VTL_STORE_DEADLINE_MS: '0' })).toThrow(/VTL_STORE_DEADLINE_MS/);
  });
});
