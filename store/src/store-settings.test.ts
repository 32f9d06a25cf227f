import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { storeSettingsFromEnv } from './store-settings.js';

describe('storeSettingsFromEnv', () => {
  it('reads endpoints, the three TLS files together, the sealing key file and the deadline', () => {
    expect(storeSettingsFromEnv({}, '/s')).toEqual({
      endpoints: ['http://127.0.0.1:2379'],
      tls: undefined,
      sealingKeyFile: '/s/pki/sealing.key',
      deadlineMs: 5_000,
    });
    const tls = {
      VTL_ETCD_CA_FILE: '/p/ca.crt',
      VTL_ETCD_CERT_FILE: '/p/a.crt',
      VTL_ETCD_KEY_FILE: '/p/a.key',
    };
    expect(
      storeSettingsFromEnv({ ...tls, VTL_SEALING_KEY_FILE: '/k', VTL_STORE_DEADLINE_MS: '700' }, '/s'),
    ).toEqual({
      endpoints: ['https://127.0.0.1:2379'],
      tls: { caFile: '/p/ca.crt', certFile: '/p/a.crt', keyFile: '/p/a.key' },
      sealingKeyFile: '/k',
      deadlineMs: 700,
    });
    expect(storeSettingsFromEnv({ VTL_ETCD_ENDPOINTS: 'https://a:1, https://b:2' }, '/s').endpoints).toEqual([
      'https://a:1',
      'https://b:2',
    ]);
    expect(storeSettingsFromEnv({ VTL_SEALING_KEY_FILE: 'k' }, '/s').sealingKeyFile).toBe(path.resolve('k'));
  });

  it('refuses a partial TLS setting and a deadline that is not a positive integer, naming the variable', () => {
    expect(() => storeSettingsFromEnv({ VTL_ETCD_CA_FILE: '/p/ca.crt' }, '/s')).toThrow(/go together/);
    for (const bad of ['0', '-5', 'soon', '2.5']) {
      expect(() => storeSettingsFromEnv({ VTL_STORE_DEADLINE_MS: bad }, '/s')).toThrow(
        `VTL_STORE_DEADLINE_MS: expected a positive integer of milliseconds, got "${bad}"`,
      );
    }
  });
});
