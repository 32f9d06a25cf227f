import { describe, expect, it } from 'vitest';
import { bannerFacts, bannerText, targetName } from './banner.js';
import { loadConfig } from './config.js';

describe('the start banner', () => {
  it('says where the console is, how to log in and what to connect', () => {
    const config = loadConfig({
      VTL_STATE_DIR: '/nonexistent-vtl',
      VTL_NODE: 'Node_1',
      VTL_HTTPS_PORT: '9443',
    });
    const facts = bannerFacts(config);
    expect(facts).toEqual({
      console: 'https://127.0.0.1:9443/',
      adminPasswordFile: undefined,
      iscsiPortal: '127.0.0.1:3260',
      iscsiTarget: 'iqn.2026-11.io.vtl:node-1',
      selfSigned: true,
    });
    const text = bannerText({ ...facts, adminPasswordFile: '/var/vtl/initial-admin-password' });
    expect(text).toContain('Web console   https://127.0.0.1:9443/  (self-signed certificate)');
    expect(bannerText(bannerFacts({ ...config, tlsCertFile: '/etc/vtl/cert.pem' }))).not.toContain(
      'self-signed',
    );
    expect(text).toContain('password in /var/vtl/initial-admin-password');
    expect(text).toContain('iSCSI target  iqn.2026-11.io.vtl:node-1');
    expect(bannerText(facts)).toContain('the initial password was changed');
  });

  it('names the target as the emulator does', () => {
    expect(targetName('vm')).toBe('iqn.2026-11.io.vtl:vm');
  });
});
