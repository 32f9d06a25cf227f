import { open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirPerTest } from '../testing/temp-dir-per-test.js';
import { BlockWriter } from './block-writer.js';
import { DirectWriter } from './direct-write.js';

const tmp = tempDirPerTest();
const KiB = 1024;

/** A data file whose writes are recorded as [offset, length]. */
async function recordedFile(path: string) {
  const handle = await open(path, 'w+');
  const writes: Array<[number, number]> = [];
  const spy = Object.create(handle) as FileHandle;
  spy.writev = (buffers, position) => {
    writes.push([position as number, buffers.reduce((n, b) => n + b.byteLength, 0)]);
    return handle.writev(buffers, position);
  };
  return { handle, spy, writes };
}

/** Blocks of these lengths written back to back, each filled with its own number. */
function blocks(lengths: number[]): Buffer[] {
  return lengths.map((n, i) => Buffer.alloc(n, i + 1));
}

describe('BlockWriter cells (write-cells.ts)', () => {
  it('never lets one write cross a cell boundary, and the file holds every block', async () => {
    const path = join(tmp.path, 'data');
    const { handle, spy, writes } = await recordedFile(path);
    const cell = 512 * KiB;
    const writer = new BlockWriter(spy, await DirectWriter.open(path, false), () => undefined, cell);
    // Odd lengths too, so blocks straddle cell boundaries at every kind of offset.
    const data = blocks([256 * KiB, 300 * KiB, 100_000, 1024 * KiB, 64 * KiB, 777 * KiB, 5, 2048 * KiB]);
    let at = 0;
    const written = data.map((b) => {
      const w = writer.write(b, at);
      at += b.length;
      return w;
    });
    await Promise.all(written);
    await writer.close();
    await handle.close();
    expect(Buffer.concat(data).equals(await readFile(path))).toBe(true);
    expect(writes.length).toBeGreaterThan(1);
    for (const [offset, length] of writes)
      expect(Math.floor(offset / cell), `write of ${length} at ${offset}`).toBe(
        Math.floor((offset + length - 1) / cell),
      );
  });

  it('never starts a write beside one on its way, and still keeps four on their way', async () => {
    const path = join(tmp.path, 'data');
    const handle = await open(path, 'w+');
    const cell = 512 * KiB;
    const onTheirWay: Array<[number, number]> = [];
    let most = 0;
    const touching: string[] = [];
    const spy = Object.create(handle) as FileHandle;
    spy.writev = async (buffers, position) => {
      const start = position as number;
      const end = start + buffers.reduce((n, b) => n + b.byteLength, 0);
      const page = (n: number) => Math.floor(n / 4096);
      for (const [s, e] of onTheirWay)
        if (page(s) <= page(end + 4095) && page(start) <= page(e + 4095))
          touching.push(`${start} beside ${s}`);
      const me: [number, number] = [start, end];
      onTheirWay.push(me);
      most = Math.max(most, onTheirWay.length);
      try {
        // Slow writes, so the blocks behind them queue up as they do on a busy pool.
        await new Promise((resolve) => setTimeout(resolve, 5));
        return await handle.writev(buffers, position);
      } finally {
        onTheirWay.splice(onTheirWay.indexOf(me), 1);
      }
    };
    const writer = new BlockWriter(spy, await DirectWriter.open(path, false), () => undefined, cell);
    const data = blocks([...Array.from({ length: 24 }, () => 1024 * KiB), 100_000, 300 * KiB, 5, 777 * KiB]);
    let at = 0;
    await Promise.all(
      data.map((b) => {
        const w = writer.write(b, at);
        at += b.length;
        return w;
      }),
    );
    await writer.close();
    await handle.close();
    expect(Buffer.concat(data).equals(await readFile(path))).toBe(true);
    expect(touching).toEqual([]);
    // Four on their way on btrfs (block-writer.ts MAX_IN_FLIGHT_CELLS), none of them neighbours.
    expect(most).toBe(4);
  });

  it('coalesces across any offset without cells', async () => {
    const path = join(tmp.path, 'data');
    const { handle, spy, writes } = await recordedFile(path);
    const writer = new BlockWriter(spy, await DirectWriter.open(path, false), () => undefined);
    const data = blocks(Array.from({ length: 16 }, () => 256 * KiB));
    let at = 0;
    await Promise.all(
      data.map((b) => {
        const w = writer.write(b, at);
        at += b.length;
        return w;
      }),
    );
    await writer.close();
    await handle.close();
    expect(Buffer.concat(data).equals(await readFile(path))).toBe(true);
    // The blocks issued while the first write was on its way went out together.
    expect(writes.some(([, length]) => length > 512 * KiB)).toBe(true);
  });
});
