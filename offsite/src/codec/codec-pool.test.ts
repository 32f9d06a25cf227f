import { afterAll, describe, expect, it } from 'vitest';
import { backupLikeData } from '../testing/cartridge-fixture.js';
import { CodecPool } from './codec-pool.js';
import { compressBound } from './messages.js';
import { createHash } from 'node:crypto';

const pool = new CodecPool({ threads: 2 });
afterAll(() => pool.close());

function shared(bytes: Uint8Array | number): Uint8Array {
  const size = typeof bytes === 'number' ? bytes : bytes.length;
  const view = new Uint8Array(new SharedArrayBuffer(size));
  if (typeof bytes !== 'number') view.set(bytes);
  return view;
}

describe('CodecPool', () => {
  const data = backupLikeData(3 * 1024 * 1024 + 5, 2);
  data.fill(0, 1024 * 1024, 2 * 1024 * 1024);

  it('compresses deterministically and unpacks to the same bytes with an all-zero block map', async () => {
    const raw = shared(data);
    const out1 = shared(compressBound(raw.length));
    const out2 = shared(compressBound(raw.length));
    const [a, b] = await Promise.all([pool.compress(raw, out1), pool.compress(raw, out2)]);
    expect(a.sha256).toBe(b.sha256);
    expect(a.stored_bytes).toBeLessThan(raw.length);
    expect(createHash('sha256').update(out1.subarray(0, a.stored_bytes)).digest('hex')).toBe(a.sha256);

    const back = shared(raw.length);
    const zero = await pool.unpack(out1.subarray(0, a.stored_bytes), back, {
      sha256: a.sha256,
      raw_bytes: raw.length,
      name: 'c0',
    });
    expect(Buffer.from(back).equals(data)).toBe(true);
    expect([...zero.subarray(16, 32)].every((z) => z === 1)).toBe(true);
    expect(zero[0]).toBe(0);
  });

  it("compresses at the pool's level: a higher one stores fewer bytes, and both unpack", async () => {
    const text = Buffer.from(
      Array.from({ length: 40_000 }, (_, i) => `record ${i} customer=${(i * 7919) % 1000} status=ok\n`).join(
        '',
      ),
    );
    const stored: number[] = [];
    for (const level of [1, 19]) {
      const p = new CodecPool({ threads: 1, level });
      try {
        const raw = shared(text);
        const out = shared(compressBound(raw.length));
        const c = await p.compress(raw, out);
        const back = shared(raw.length);
        await p.unpack(out.subarray(0, c.stored_bytes), back, { ...c, raw_bytes: raw.length, name: 'c0' });
        expect(Buffer.from(back).equals(text)).toBe(true);
        stored.push(c.stored_bytes);
      } finally {
        await p.close();
      }
    }
    expect(stored[1]).toBeLessThan(stored[0]!);
  });

  it('refuses a stored chunk whose hash, content checksum or length is wrong', async () => {
    const raw = shared(data);
    const out = shared(compressBound(raw.length));
    const c = await pool.compress(raw, out);
    const stored = out.subarray(0, c.stored_bytes);
    const expect0 = { sha256: c.sha256, raw_bytes: raw.length, name: 'chunk-00042.tar.zst' };
    await expect(pool.check(stored, { ...expect0, sha256: '0'.repeat(64) })).rejects.toMatchObject({
      code: 'verify_failed',
      message: expect.stringContaining('chunk-00042.tar.zst: SHA-256'),
    });
    await expect(pool.check(stored, { ...expect0, raw_bytes: raw.length - 1 })).rejects.toMatchObject({
      code: 'verify_failed',
    });
    // A flipped byte with a matching SHA-256 (as if the manifest lied): zstd's checksum catches it.
    const bad = shared(stored);
    bad[bad.length >> 1] = (bad[bad.length >> 1] as number) ^ 0x01;
    const badSha = createHash('sha256').update(bad).digest('hex');
    await expect(pool.check(bad, { ...expect0, sha256: badSha })).rejects.toMatchObject({
      code: 'verify_failed',
      message: expect.stringContaining('does not decompress'),
    });
  });

  it('insists on shared memory', async () => {
    await expect(pool.compress(new Uint8Array(10), shared(100))).rejects.toThrow(/SharedArrayBuffer/);
  });
});
