import { describe, expect, it } from 'vitest';
import { loadEmulatorEnv, parseEmulatorConfig } from './config.js';

const lib = (over: Record<string, unknown> = {}) => ({
  id: 1,
  name: 'a',
  serial: 'S1',
  product: '3573-TL',
  vendor: 'IBM',
  drive_product: 'ULT3580-HH8',
  drive_serials: ['1'],
  num_slots: 10,
  num_ie: 2,
  media_dir: '/pool/a',
  generation: 8,
  ...over,
});
const config = (libraries: unknown[]) => ({
  node: 'n1',
  generation: 4,
  socket: '/run/vtl/emulator.sock',
  iscsi: { bind: '0.0.0.0', port: 3260, open: false, allowed_initiators: ['iqn.x'] },
  libraries,
});

describe('emulator config', () => {
  it('accepts a well-formed config', () => {
    const parsed = parseEmulatorConfig(config([lib(), lib({ id: 2, media_dir: '/pool/b' })]));
    expect(parsed.libraries.map((l) => l.media_dir)).toEqual(['/pool/a', '/pool/b']);
    expect(parsed.iscsi.port).toBe(3260);
    // Connections get CUBIC unless the config says otherwise ('' keeps the system's).
    expect(parsed.iscsi.tcp_congestion).toBe('cubic');
    const withIscsi = (iscsi: object) => ({ ...config([]), iscsi: { ...config([]).iscsi, ...iscsi } });
    expect(parseEmulatorConfig(withIscsi({ tcp_congestion: 'bbr' })).iscsi.tcp_congestion).toBe('bbr');
    expect(parseEmulatorConfig(withIscsi({ tcp_congestion: '' })).iscsi.tcp_congestion).toBe('');
  });

  it('names the field that is wrong', () => {
    const bad = (libraries: unknown[]) => () => parseEmulatorConfig(config(libraries));
    expect(bad([lib({ generation: 2 })])).toThrow(/libraries\[0\]\.generation/);
    expect(bad([lib({ drive_serials: [] })])).toThrow(/drive_serials/);
    expect(bad([lib({ num_slots: 0 })])).toThrow(/num_slots/);
    expect(bad([lib(), lib()])).toThrow(/unique/);
    expect(bad([lib(), lib({ id: 2 })])).toThrow(/own media_dir/);
    expect(() => parseEmulatorConfig({ ...config([]), iscsi: {} })).toThrow(/iscsi/);
    for (const tcp_congestion of ['cubic; rm', 'a'.repeat(16), 7]) {
      const iscsi = { ...config([]).iscsi, tcp_congestion };
      expect(() => parseEmulatorConfig({ ...config([]), iscsi })).toThrow(/iscsi\.tcp_congestion/);
    }
  });
});

describe('emulator environment', () => {
  it('keeps the unload quiet window unless VTL_UNLOAD_GUARD_MS sets one', () => {
    expect(loadEmulatorEnv({}).unloadGuardMs).toBeUndefined();
    expect(loadEmulatorEnv({ VTL_UNLOAD_GUARD_MS: '' }).unloadGuardMs).toBeUndefined();
    expect(loadEmulatorEnv({ VTL_UNLOAD_GUARD_MS: '500' }).unloadGuardMs).toBe(500);
    expect(() => loadEmulatorEnv({ VTL_UNLOAD_GUARD_MS: '-1' })).toThrow(/VTL_UNLOAD_GUARD_MS/);
    expect(() => loadEmulatorEnv({ VTL_UNLOAD_GUARD_MS: 'soon' })).toThrow(/VTL_UNLOAD_GUARD_MS/);
  });
});
