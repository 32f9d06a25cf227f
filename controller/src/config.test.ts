import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('controller config', () => {
  it('has a default for every setting', () => {
    expect(loadConfig({})).toMatchObject({
      node: os.hostname(),
      store: { endpoints: ['http://127.0.0.1:2379'], tls: undefined, deadlineMs: 5_000 },
      drainTimeoutMs: 0,
      evictPolicyPeriodMs: 0,
    });
  });

  it('reads every variable it documents', () => {
    expect(
      loadConfig({
        VTL_NODE: 'n7',
        VTL_STATE_DIR: '/srv/vtl',
        VTL_ETCD_ENDPOINTS: 'http://a:2379',
        VTL_DRAIN_TIMEOUT_MS: '2500',
        VTL_STORE_DEADLINE_MS: '900',
        VTL_EVICT_POLICY_PERIOD_MS: '2000',
      }),
    ).toMatchObject({
      node: 'n7',
      store: { endpoints: ['http://a:2379'], sealingKeyFile: '/srv/vtl/pki/sealing.key', deadlineMs: 900 },
      drainTimeoutMs: 2500,
      evictPolicyPeriodMs: 2000,
    });
    expect(() => loadConfig({ VTL_ETCD_CA_FILE: '/ca.crt' })).toThrow(/go together/);
  });
});
