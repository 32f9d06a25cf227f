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

  it('reads the export, codec, version and store settings with their defaults', () => {
    const d = loadConfig({});
    expect(d).toMatchObject({
      exportChunkBytes: undefined,
      poolRefreshMaxMs: undefined,
      codecNice: 5,
      zstdLevel: 3,
      version: 'v0.0.0',
      store: { endpoints: ['http://127.0.0.1:2379'], tls: undefined, deadlineMs: 5000 },
    });
    expect(
      loadConfig({
        VTL_EXPORT_CHUNK_BYTES: '131072',
        VTL_POOL_REFRESH_MAX_MS: '5000',
        VTL_CODEC_NICE: '0',
        VTL_ZSTD_LEVEL: '1',
        VTL_VERSION: 'v1.2.3',
        VTL_STORE_DEADLINE_MS: '800',
      }),
    ).toMatchObject({
      exportChunkBytes: 131072,
      poolRefreshMaxMs: 5000,
      codecNice: 0,
      zstdLevel: 1,
      version: 'v1.2.3',
      store: { deadlineMs: 800 },
    });
    for (const bad of ['0', '20', 'fast', '2.5']) {
      expect(() => loadConfig({ VTL_ZSTD_LEVEL: bad })).toThrow(
        /VTL_ZSTD_LEVEL must be a whole number from 1/,
      );
    }
    expect(() => loadConfig({ VTL_STORE_DEADLINE_MS: 'soon' })).toThrow(/VTL_STORE_DEADLINE_MS/);
  });

  it('builds FC targets on qla2xxx unless VTL_LIO_FABRIC names a test fabric with its target names', () => {
    expect(loadConfig({}).lio.fabric).toBe('qla2xxx');
    expect(
      loadConfig({
        VTL_LIO_FABRIC: 'iscsi',
        VTL_LIO_PORTS: 'iqn.2026-11.io.vtl:a,iqn.2026-11.io.vtl:b',
        VTL_LIO_PORTAL: '127.0.0.1:3260',
      }).lio,
    ).toEqual({
      fabric: 'iscsi',
      ports: ['iqn.2026-11.io.vtl:a', 'iqn.2026-11.io.vtl:b'],
      portal: '127.0.0.1:3260',
      nexus: undefined,
    });
    expect(() => loadConfig({ VTL_LIO_FABRIC: 'loopback' })).toThrow(/needs VTL_LIO_PORTS/);
    expect(() => loadConfig({ VTL_LIO_FABRIC: 'fcoe' })).toThrow(/one of qla2xxx, loopback, iscsi/);
  });
});
