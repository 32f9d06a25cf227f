import { describe, expect, it } from 'vitest';
import type { EmuLibrary } from '@vtl/emulator';
import { libraryRecords } from './node-status.js';
import { emulatorEnv } from './emulator-env.js';

const library = (id: number, labels: string[]) =>
  ({
    id,
    serial: `S${id}`,
    changer: `lun${id}`,
    drives: [],
    slots: 4,
    cartridges: labels.map((label) => ({
      label,
      size_bytes: 0,
      phys_bytes: 0,
      modified: '',
      location: 'slot:1',
    })),
  }) as unknown as EmuLibrary;

describe('the node status publisher keeps one copy of an unchanged library record (issue 13, idle memory)', () => {
  it('reuses the previous record and JSON of a library whose JSON is unchanged, a new one for one that changed', () => {
    const first = libraryRecords('n1', [library(1, ['A']), library(2, ['B'])]);
    const second = libraryRecords('n1', [library(1, ['A']), library(2, ['B', 'C'])], first);
    const [k1, k2] = [...first.keys()];
    expect(second.get(k1!)).toBe(first.get(k1!));
    expect(second.get(k2!)).not.toBe(first.get(k2!));
    expect(JSON.stringify(second.get(k2!)!.value)).toContain('"C"');
    expect(second.get(k2!)!.digest).not.toBe(first.get(k2!)!.digest);
  });
});

describe('emulatorEnv', () => {
  it("drops the launcher's fixed malloc thresholds (the emulator's data path reuses its 1 MiB buffers) and keeps the rest", () => {
    const env = emulatorEnv({
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '131072',
      MALLOC_TRIM_THRESHOLD_: '131072',
      NODE_OPTIONS: '--import=x',
      PATH: '/bin',
    });
    expect(env).toEqual({ MALLOC_ARENA_MAX: '2', NODE_OPTIONS: '--import=x', PATH: '/bin' });
  });
});
