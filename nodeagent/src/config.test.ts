import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('nodeagent config', () => {
  it("gives the emulator's iSCSI connections CUBIC unless VTL_ISCSI_TCP_CONGESTION says otherwise", () => {
    expect(loadConfig({}).iscsiTcpCongestion).toBe('cubic');
    expect(loadConfig({ VTL_ISCSI_TCP_CONGESTION: 'bbr' }).iscsiTcpCongestion).toBe('bbr');
    // Empty: the system's default stays.
    expect(loadConfig({ VTL_ISCSI_TCP_CONGESTION: '' }).iscsiTcpCongestion).toBe('');
    expect(() => loadConfig({ VTL_ISCSI_TCP_CONGESTION: 'Cubic!' })).toThrow(/VTL_ISCSI_TCP_CONGESTION/);
  });
});
