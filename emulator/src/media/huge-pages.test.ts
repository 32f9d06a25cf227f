import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { giveAlignedBuffer, takeAlignedBuffer } from './aligned-buffers.js';

const MiB = 1024 * 1024;
const thpMode = (() => {
  try {
    return /\[(\w+)\]/.exec(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))?.[1];
  } catch {
    return undefined;
  }
})();

/** This process's anonymous memory in transparent huge pages. */
function anonHugeBytes(): number {
  const kib = /AnonHugePages:\s+(\d+) kB/.exec(readFileSync('/proc/self/smaps_rollup', 'utf8'))?.[1];
  return Number(kib) * 1024;
}

describe('the aligned pool in huge pages', () => {
  // `never` ignores the advice; `madvise` (Debian's default) gives huge pages only to advised
  // memory, which is what this checks.
  it.skipIf(thpMode === undefined || thpMode === 'never')(
    "backs a new slab's slots with 2 MiB pages, so the disk gets them in few large requests",
    () => {
      const before = anonHugeBytes();
      // A size class no other test of this process uses: its slab is made here, untouched.
      const slot = takeAlignedBuffer(8 * MiB)!;
      expect(slot).toBeDefined();
      slot.fill(0xa5); // the first touch faults the pages in
      const gained = anonHugeBytes() - before;
      giveAlignedBuffer(slot);
      // The whole slot, give or take a huge page at each end of an unaligned mapping.
      expect(gained).toBeGreaterThanOrEqual(4 * MiB);
    },
  );
});
