import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZERO_BLOCK } from '../codec/messages.js';
import { backupLikeData, makeTestCartridge } from '../testing/cartridge-fixture.js';
import { CARTRIDGE_BASE_FILES as CARTRIDGE_FILES } from '@vtl/api';
import { BLOCK, decodeHeader, fileHeader, paxSize, USTAR_MAX_SIZE } from './tar-header.js';
import { TarExtractor } from './tar-extract.js';
import { TarSource } from './tar-source.js';

const run = promisify(execFile);
let work: string;
let cart: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'vtl-tar-'));
  cart = await makeTestCartridge(join(work, 'TAR001L8'), {
    label: 'TAR001L8',
    dataBytes: 3 * 1024 * 1024 + 77,
    extents: [{ offset: 1024 * 1024, bytes: backupLikeData(300_001, 5) }],
  });
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

async function wholeTar(dir: string): Promise<Buffer> {
  const source = await TarSource.open(dir);
  try {
    const buf = Buffer.alloc(source.size);
    expect(await source.read(buf, 0)).toBe(source.size);
    return buf;
  } finally {
    await source.close();
  }
}

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('the cartridge tar', () => {
  it('is a plain tar that GNU tar lists and extracts to the same files', async () => {
    const tarFile = join(work, 'cart.tar');
    await writeFile(tarFile, await wholeTar(cart));
    const { stdout } = await run('tar', ['--numeric-owner', '-tvf', tarFile]);
    const lines = stdout.trim().split('\n');
    expect(lines.map((l) => l.split(/\s+/).at(-1))).toEqual([...CARTRIDGE_FILES]);
    for (const l of lines) expect(l).toMatch(/^-rw-r--r-- 0\/0 .* 1970-01-01 00:00 /);
    const out = join(work, 'gnu-extract');
    await mkdir(out);
    await run('tar', ['-xf', tarFile, '-C', out]);
    for (const f of CARTRIDGE_FILES)
      expect(sha(await readFile(join(out, f))), f).toBe(sha(await readFile(join(cart, f))));
  });

  it('gives the same bytes every time and reads the same at any offset', async () => {
    const a = await wholeTar(cart);
    expect(sha(await wholeTar(cart))).toBe(sha(a));
    const source = await TarSource.open(cart);
    try {
      for (const [offset, len] of [
        [0, 700],
        [511, 2000],
        [1024 * 1024 + 1000, 65_536],
        [source.size - 1500, 1500],
      ] as const) {
        const part = Buffer.alloc(len);
        await source.read(part, offset);
        expect(part.equals(a.subarray(offset, offset + len)), `at ${offset}`).toBe(true);
      }
    } finally {
      await source.close();
    }
  });

  it('unpacks fed in odd pieces, leaving all-zero blocks unwritten', async () => {
    const tar = await wholeTar(cart);
    const out = join(work, 'own-extract');
    await mkdir(out);
    const ex = new TarExtractor(out, 'the test tar');
    for (let at = 0; at < tar.length; at += 100_003) {
      const piece = tar.subarray(at, at + 100_003);
      const zero = new Uint8Array(Math.ceil(piece.length / ZERO_BLOCK));
      for (let b = 0; b < zero.length; b++) {
        zero[b] = piece.subarray(b * ZERO_BLOCK, (b + 1) * ZERO_BLOCK).every((x) => x === 0) ? 1 : 0;
      }
      await ex.write(Buffer.from(piece), zero);
    }
    await ex.finish();
    for (const f of CARTRIDGE_FILES)
      expect(sha(await readFile(join(out, f))), f).toBe(sha(await readFile(join(cart, f))));
  });

  it('refuses entries that are not cartridge files', async () => {
    const evil = Buffer.concat([fileHeader('../escape', 5), Buffer.alloc(BLOCK)]);
    const out = join(work, 'evil');
    await mkdir(out);
    const ex = new TarExtractor(out, 'the evil tar');
    await expect(ex.write(evil, new Uint8Array(1))).rejects.toMatchObject({
      code: 'verify_failed',
      message: expect.stringContaining('"../escape", which is not a cartridge file'),
    });
    await ex.close();
  });

  it('carries every partition of a partitioned cartridge, byte-identical, and refuses one missing', async () => {
    const dir = await makeTestCartridge(join(work, 'PRT001L8'), {
      label: 'PRT001L8',
      dataBytes: 2 * 1024 * 1024,
      extents: [{ offset: 4096, bytes: backupLikeData(70_000, 3) }],
    });
    const meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(
      join(dir, 'meta.json'),
      JSON.stringify({ ...meta, format: 2, partitions: [11_880_000_000_000, 120_000_000_000] }),
    );
    await writeFile(join(dir, 'index.p1'), backupLikeData(32 + 24 * 7, 4));
    await writeFile(join(dir, 'data.p1'), backupLikeData(123_457, 5));
    const tar = await wholeTar(dir);
    const names = [...CARTRIDGE_FILES, 'index.p1', 'data.p1'];
    const out = join(work, 'partitioned-extract');
    await mkdir(out);
    const ex = new TarExtractor(out, 'the partitioned tar');
    await ex.write(tar, new Uint8Array(Math.ceil(tar.length / ZERO_BLOCK)));
    await ex.finish();
    for (const f of names)
      expect(sha(await readFile(join(out, f))), f).toBe(sha(await readFile(join(dir, f))));

    // A tar whose meta.json names two partitions but lacks the second one's files.
    const out2 = join(work, 'lacking-extract');
    await mkdir(out2);
    const ex2 = new TarExtractor(out2, 'the lacking tar');
    const withoutP1 = tar.subarray(0, tar.indexOf(Buffer.from('index.p1')));
    await ex2.write(
      Buffer.concat([withoutP1, Buffer.alloc(2 * BLOCK)]),
      new Uint8Array(1 + tar.length / ZERO_BLOCK),
    );
    await expect(ex2.finish()).rejects.toMatchObject({
      code: 'verify_failed',
      message: expect.stringContaining('lacks index.p1, data.p1'),
    });
    await ex2.close();
  });

  it('records sizes beyond the 8 GiB ustar limit in a pax header', () => {
    const size = 12_000_000_000_123;
    const blocks = fileHeader('data', size);
    expect(blocks.length).toBe(3 * BLOCK);
    const pax = decodeHeader(blocks.subarray(0, BLOCK));
    expect(pax).toMatchObject({ kind: 'pax' });
    const records = blocks.subarray(BLOCK, BLOCK + (pax as { size: number }).size);
    expect(paxSize(records)).toBe(size);
    expect(decodeHeader(blocks.subarray(2 * BLOCK))).toEqual({
      kind: 'file',
      name: 'data',
      size: USTAR_MAX_SIZE,
    });
    expect(fileHeader('data', USTAR_MAX_SIZE).length).toBe(BLOCK);
  });
});
