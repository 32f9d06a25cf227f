import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { trimMalloc } from './malloc-trim.js';

/** This process's private dirty memory, in bytes. */
const privateDirty = () =>
  Number(/^Private_Dirty:\s+(\d+)/m.exec(fs.readFileSync('/proc/self/smaps_rollup', 'utf8'))?.[1]) * 1024;

describe('malloc_trim', () => {
  it.runIf(process.platform === 'linux')(
    'hands the free pages of a fragmented malloc arena back to the kernel',
    () => {
      v8.setFlagsFromString('--expose-gc');
      const gc = vm.runInNewContext('gc') as () => void;
      // 64 MB of 16 KB native buffers (below the mmap threshold: from the arena), one in 16
      // kept: free() cannot return the rest, each freed run sits below a kept buffer.
      let buffers: Buffer[] | undefined = Array.from({ length: 4096 }, () =>
        Buffer.allocUnsafeSlow(16 * 1024).fill(1),
      );
      const kept = buffers.filter((_, i) => i % 16 === 0);
      buffers = undefined;
      gc();
      const before = privateDirty();
      expect(trimMalloc()).toBe(true);
      const released = before - privateDirty();
      expect(buffers).toBeUndefined();
      expect(kept).toHaveLength(256);
      expect(released).toBeGreaterThan(16 * 2 ** 20);
    },
  );
});
