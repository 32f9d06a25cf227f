import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { adminStoreSettings } from './seal-rotation.js';

describe('appliance config', () => {
  it('has a default for every setting', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      stateDir: path.resolve('var'),
      bind: '127.0.0.1',
      node: os.hostname(),
      httpsPort: 8443,
      plainPort: 8080,
      iscsiPort: 3260,
      etcdEndpoints: [],
      etcdClientPort: 2379,
      etcdPeerPort: 2380,
      sealingKeyFile: path.resolve('var/pki/sealing.key'),
      defaultPool: path.resolve('var/pool'),
      tlsCertFile: undefined,
    });
  });

  it('reads every variable it documents and hands the environment on to its processes', () => {
    const env = {
      VTL_STATE_DIR: '/srv/vtl',
      VTL_HTTPS_PORT: '9443',
      VTL_DEFAULT_POOL: '/pools/a',
      VTL_TLS_CERT_FILE: '/etc/vtl/cert.pem',
      VTL_STORE_DEADLINE_MS: '900',
      VTL_OP_TIMEOUT_MS: '1000',
    };
    const c = loadConfig(env);
    expect(c).toMatchObject({
      stateDir: '/srv/vtl',
      httpsPort: 9443,
      defaultPool: '/pools/a',
      tlsCertFile: '/etc/vtl/cert.pem',
    });
    // The apiserver's own settings reach it through the inherited environment.
    expect(c.inherited.VTL_OP_TIMEOUT_MS).toBe('1000');
    expect(() => loadConfig({ VTL_ISCSI_PORT: '70000' })).toThrow(/VTL_ISCSI_PORT must be a TCP port/);
  });

  it("lets seal-rotate reach its own etcd as the admin certificate, an external one by the operator's files", () => {
    const own = adminStoreSettings(
      loadConfig({ VTL_STATE_DIR: '/srv/vtl', VTL_ETCD_CLIENT_PORT: '2479', VTL_STORE_DEADLINE_MS: '900' }),
    );
    expect(own.endpoints).toEqual(['https://127.0.0.1:2479']);
    expect(own.sealingKeyFile).toBe('/srv/vtl/pki/sealing.key');
    expect(own.deadlineMs).toBe(900);
    expect(own.tls).toEqual({
      caFile: '/srv/vtl/pki/ca.crt',
      certFile: '/srv/vtl/pki/admin.crt',
      keyFile: '/srv/vtl/pki/admin.key',
    });
    const external = adminStoreSettings(
      loadConfig({
        VTL_ETCD_ENDPOINTS: 'https://etcd:2379',
        VTL_ETCD_CA_FILE: '/c/ca',
        VTL_ETCD_CERT_FILE: '/c/cert',
        VTL_ETCD_KEY_FILE: '/c/key',
      }),
    );
    expect(external).toMatchObject({
      endpoints: ['https://etcd:2379'],
      tls: { caFile: '/c/ca', certFile: '/c/cert', keyFile: '/c/key' },
    });
  });
});
