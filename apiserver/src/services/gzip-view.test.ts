import { randomBytes } from 'node:crypto';
import { crc32, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { acceptsGzip, crc32Combine, gzipView } from './gzip-view.js';

const json = Buffer.from(
  JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ label: `AAA${i}L8`, slot: i, state: 'home' }))),
);

describe('gzip of a kept view', () => {
  it('decompresses to the chunks in order, the per-request head stored and the kept part deflated', () => {
    const head = Buffer.from('{"updated_at":"2026-12-02T03:12:00.000Z",');
    const gz = Buffer.concat(gzipView([head, json]));
    expect(gunzipSync(gz).equals(Buffer.concat([head, json]))).toBe(true);
    expect(gz.length).toBeLessThan(json.length / 5);
    expect(gunzipSync(Buffer.concat(gzipView([json]))).equals(json)).toBe(true);
    // A head over a stored block's 65,535 bytes, and an empty kept part.
    const big = randomBytes(150_000);
    expect(gunzipSync(Buffer.concat(gzipView([big, json]))).equals(Buffer.concat([big, json]))).toBe(true);
    expect(gunzipSync(Buffer.concat(gzipView([big, Buffer.alloc(0)]))).equals(big)).toBe(true);
  });

  it('deflates a kept buffer once, however many requests read it', () => {
    const kept = Buffer.from(json);
    const first = gzipView([Buffer.from('a'), kept]);
    const second = gzipView([Buffer.from('b'), kept]);
    expect(second.at(-2)).toBe(first.at(-2));
    // A new buffer (the view after a change) is deflated anew.
    expect(gzipView([Buffer.from(json)]).at(-2)).not.toBe(first.at(-2));
    // A view of one chunk: one buffer, the same for every request until the view changes.
    const alone = gzipView([kept]);
    expect(alone).toHaveLength(1);
    expect(gzipView([kept])[0]).toBe(alone[0]);
    expect(gunzipSync(alone[0]!).equals(kept)).toBe(true);
  });

  it('combines CRC-32s as zlib computes the CRC of the whole', () => {
    for (const [a, b] of [
      [0, 0],
      [1, 1],
      [7, 70_001],
      [100_000, 3],
    ] as const) {
      const x = randomBytes(a);
      const y = randomBytes(b);
      expect(crc32Combine(crc32(x), crc32(y), b)).toBe(crc32(Buffer.concat([x, y])));
    }
  });

  it('reads Accept-Encoding as RFC 9110 says', () => {
    expect(acceptsGzip('gzip, deflate, br')).toBe(true);
    expect(acceptsGzip('br, x-gzip;q=0.5')).toBe(true);
    expect(acceptsGzip('deflate, *;q=0.1')).toBe(true);
    expect(acceptsGzip(['br', 'GZIP'])).toBe(true);
    expect(acceptsGzip('br;q=1, gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip;q=0, *')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip('*;q=0')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
    // Read again (from what was kept of the first reading), the same answers.
    expect(acceptsGzip('br;q=1, gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip, deflate, br')).toBe(true);
    expect(acceptsGzip(`${'x;q=1, '.repeat(40)}gzip`)).toBe(true);
  });
});
