import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirPerTest } from '../testing/temp-dir-per-test.js';
import { giveAlignedBuffer, takeAlignedBuffer } from './aligned-buffers.js';
import { giveBlockBuffer } from './block-buffers.js';
import { DirectReader } from './direct-read.js';

const tmp = tempDirPerTest();

describe('direct reads around the page cache', () => {
  it('reads any range of a file, at any offset and length, into aligned pool buffers', async () => {
    const content = randomBytes(3 * 1024 * 1024 + 123);
    const path = join(tmp.path, 'data');
    await writeFile(path, content);
    const reader = await DirectReader.open(path);
    try {
      for (const [offset, n] of [
        [0, 262_144],
        [80, 1000],
        [4095, 262_145],
        [1_048_576 + 17, 1_048_576],
        [content.length - 10, 10],
      ] as const) {
        const got = await reader.read(offset, n);
        // ext4 (the appliance's pool and this machine's /tmp) takes O_DIRECT reads.
        expect(got, `read ${n} at ${offset}`).toBeDefined();
        expect(got!.bytesRead).toBe(n);
        expect(got!.buf.equals(content.subarray(offset, offset + n))).toBe(true);
        giveBlockBuffer(got!.buf);
      }
      // Past the end of the file: a short read, as the caller checks against the index.
      const tail = await reader.read(content.length - 5, 4096);
      expect(tail!.bytesRead).toBe(5);
    } finally {
      await reader.close();
    }
  });

  it('answers nothing when direct reads are off, so the caller reads the ordinary way', async () => {
    const path = join(tmp.path, 'data');
    await writeFile(path, Buffer.alloc(8192, 1));
    const reader = await DirectReader.open(path, false);
    expect(await reader.read(0, 4096)).toBeUndefined();
    await reader.close();
  });

  it('recycles a slot once any view into it comes back', () => {
    const a = takeAlignedBuffer(300_000)!;
    const b = takeAlignedBuffer(300_000)!;
    expect(a.buffer).toBe(b.buffer);
    expect(a.byteOffset).not.toBe(b.byteOffset);
    expect(giveAlignedBuffer(a.subarray(100, 200))).toBe(true);
    const c = takeAlignedBuffer(250_000)!;
    expect(c.byteOffset).toBe(a.byteOffset);
    expect(giveAlignedBuffer(Buffer.alloc(10))).toBe(false);
    giveAlignedBuffer(b);
    giveAlignedBuffer(c);
  });
});
