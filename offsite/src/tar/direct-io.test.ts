import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CARTRIDGE_BASE_FILES as CARTRIDGE_FILES } from '@vtl/api';
import { ZERO_BLOCK } from '../codec/messages.js';
import { backupLikeData, makeTestCartridge } from '../testing/cartridge-fixture.js';
import { alignedBuffers } from './direct-io.js';
import { TarExtractor } from './tar-extract.js';
import { TarSource } from './tar-source.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const CHUNK = 4 * MiB;
let work: string;
let cart: string;
let tar: Buffer;
/** Whether the file system under the temp dir takes O_DIRECT at all (tmpfs does not). */
let directWorks = false;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'vtl-direct-'));
  // Data at unaligned offsets and lengths, with a hole between: tails go through the page cache.
  cart = await makeTestCartridge(join(work, 'DIO001L8'), {
    label: 'DIO001L8',
    dataBytes: 13 * MiB + 77,
    extents: [
      { offset: 0, bytes: backupLikeData(5 * MiB + 333, 8) },
      { offset: 9 * MiB + 100, bytes: backupLikeData(3 * MiB, 9) },
    ],
  });
  const source = await TarSource.open(cart);
  tar = Buffer.alloc(source.size);
  await source.read(tar, 0);
  await source.close();
  try {
    const h = await open(join(work, 'probe'), constants.O_WRONLY | constants.O_CREAT | constants.O_DIRECT);
    await h.close();
    directWorks = true;
  } catch {
    directWorks = false;
  }
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Bytes of `file` in the page cache (util-linux fincore). */
async function cachedBytes(file: string): Promise<number> {
  const { stdout } = await run('fincore', ['--bytes', '--noheadings', '--output', 'RES', file]);
  return Number(stdout.trim());
}

/**
 * Feeds the tar chunk by chunk from `buffers` in turn, as an import does from its ring; returns
 * the bytes the extractor wrote through the page cache.
 */
async function extract(out: string, buffers: Uint8Array[]): Promise<number> {
  await mkdir(out);
  const ex = new TarExtractor(out, 'the test tar');
  for (let at = 0, i = 0; at < tar.length; at += CHUNK, i++) {
    const n = Math.min(CHUNK, tar.length - at);
    const buf = buffers[i % buffers.length] as Uint8Array;
    buf.set(tar.subarray(at, at + n));
    const piece = Buffer.from(buf.buffer, buf.byteOffset, n);
    const zero = new Uint8Array(Math.ceil(n / ZERO_BLOCK));
    for (let b = 0; b < zero.length; b++) {
      zero[b] = piece.subarray(b * ZERO_BLOCK, (b + 1) * ZERO_BLOCK).every((x) => x === 0) ? 1 : 0;
    }
    await ex.write(piece, zero);
  }
  await ex.finish();
  return ex.pageCacheBytes;
}

/** The extraction holds the cartridge's files byte for byte, with the hole kept. */
async function expectSameCartridge(out: string): Promise<void> {
  for (const f of CARTRIDGE_FILES)
    expect(sha(await readFile(join(out, f))), f).toBe(sha(await readFile(join(cart, f))));
  const data = await stat(join(out, 'data'));
  expect(data.size).toBe(13 * MiB + 77);
  expect(data.blocks * 512).toBeLessThan(10 * MiB);
}

describe('O_DIRECT writes of an import', () => {
  it('makes chunk buffers the disk takes directly, leaving no scratch file behind', async () => {
    const dir = join(work, 'aligned');
    await mkdir(dir);
    const bufs = await alignedBuffers(dir, 3, CHUNK);
    expect(bufs).toHaveLength(3);
    for (const b of bufs) {
      expect(b.length).toBe(CHUNK);
      expect(b.buffer).toBeInstanceOf(SharedArrayBuffer);
    }
    expect(await readdir(dir)).toEqual([]);
    if (!directWorks) return;
    const h = await open(join(dir, 'x'), constants.O_WRONLY | constants.O_CREAT | constants.O_DIRECT);
    try {
      for (const b of bufs) await h.write(b, 0, 64 * 1024, 0);
    } finally {
      await h.close();
    }
  });

  it('unpacks byte for byte, sparse, and past the page cache from aligned buffers', async () => {
    const out = join(work, 'direct-extract');
    await mkdir(join(work, 'ring'));
    const viaCache = await extract(out, await alignedBuffers(join(work, 'ring'), 2, CHUNK));
    // Only the unaligned tails went through the page cache (looked at before reading back).
    if (directWorks) {
      expect(viaCache).toBeLessThan(MiB);
      expect(await cachedBytes(join(out, 'data'))).toBeLessThan(MiB);
    }
    await expectSameCartridge(out);
  });

  it('falls back to the page cache for buffers that are not aligned', async () => {
    const out = join(work, 'cached-extract');
    await mkdir(join(work, 'ring-unaligned'));
    // 16 bytes past an aligned start: a new SharedArrayBuffer's own start is only 16-byte
    // aligned, so an offset into it lands on a block boundary once in a few hundred runs.
    const [aligned] = await alignedBuffers(join(work, 'ring-unaligned'), 1, CHUNK + 16);
    // Counted by the extractor: what the kernel kept cached may be reclaimed by the time it is looked at.
    const viaCache = await extract(out, [aligned!.subarray(16)]);
    expect(viaCache).toBeGreaterThan(8 * MiB);
    await expectSameCartridge(out);
  });
});
