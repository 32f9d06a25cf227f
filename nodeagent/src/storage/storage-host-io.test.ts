import type { LibrarySpec, PoolSpec } from '@vtl/api';
import type { EmuDrive, EmuLibrary } from '@vtl/emulator';
import { describe, expect, it } from 'vitest';
import { librariesOnStorage, storageHostBytes } from './storage-host-io.js';

const pool = (id: number, node: string, engine: 'btrfs' | 'dir') =>
  ({ id, node, engine, path: `/p${id}` }) as PoolSpec;
const library = (id: number, home_pool: number) => ({ id, home_pool }) as LibrarySpec;
const drive = (counters: Partial<EmuDrive>): EmuDrive =>
  ({ blocks_read: 0, blocks_written: 0, ...counters }) as EmuDrive;
const emuLibrary = (id: number, drives: EmuDrive[]) => ({ id, drives }) as EmuLibrary;

describe('the drives that pace a dedup pass', () => {
  it('are those of libraries whose home pool is a btrfs pool of this node', () => {
    const pools = [
      pool(1, 'n1', 'btrfs'),
      pool(2, 'n1', 'dir'),
      pool(3, 'n2', 'btrfs'),
      pool(4, 'n1', 'btrfs'),
    ];
    const libraries = [library(10, 1), library(11, 2), library(12, 3), library(13, 4)];
    expect([...librariesOnStorage('n1', libraries, pools)].sort()).toEqual([10, 13]);
    expect(librariesOnStorage('n1', libraries, [pool(2, 'n1', 'dir')]).size).toBe(0);
  });

  it('count every counter of those drives and nothing of the others', () => {
    const onStorage = new Set([10]);
    const libs = [
      emuLibrary(10, [
        drive({ iscsi_bytes_read: 1, iscsi_bytes_written: 20 }),
        drive({ blocks_read: 300, blocks_written: 4000 }),
      ]),
      // A library on a directory pool streaming hard: not the storage's business.
      emuLibrary(11, [drive({ iscsi_bytes_written: 1e12, blocks_written: 1e6 })]),
    ];
    expect(storageHostBytes(libs, onStorage)).toBe(4321);
    const before = storageHostBytes(libs, onStorage);
    libs[1]!.drives[0]!.iscsi_bytes_written! += 1e9;
    expect(storageHostBytes(libs, onStorage)).toBe(before);
    libs[0]!.drives[1]!.blocks_written += 1;
    expect(storageHostBytes(libs, onStorage)).toBe(before + 1);
  });

  it('count counters an older emulator leaves out as zero', () => {
    expect(storageHostBytes([emuLibrary(10, [drive({ blocks_written: 5 })])], new Set([10]))).toBe(5);
  });
});
