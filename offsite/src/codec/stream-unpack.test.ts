import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import binding from 'zstd-napi/binding.js';
import { backupLikeData } from '../testing/cartridge-fixture.js';
import { ZERO_BLOCK } from './messages.js';
import { StreamUnpack } from './stream-unpack.js';

/** A chunk as export stores it: zstd with a content checksum, and its SHA-256. */
function storedChunk(raw: Buffer): { stored: Buffer; sha256: string } {
  const c = new binding.CCtx();
  c.setParameter(binding.CParameter.compressionLevel, 3);
  c.setParameter(binding.CParameter.checksumFlag, 1);
  c.setParameter(binding.CParameter.contentSizeFlag, 1);
  const out = Buffer.alloc(raw.length + 4096);
  const stored = out.subarray(0, c.compress2(out, raw));
  return { stored, sha256: createHash('sha256').update(stored).digest('hex') };
}

/** Feeds `stored` in pieces of `piece` bytes, as a socket would; the first refusal or finish's verdict. */
function feed(sink: StreamUnpack, stored: Buffer, piece: number): string | undefined {
  for (let at = 0; at < stored.length; at += piece) {
    const bad = sink.put(stored.subarray(at, at + piece));
    if (bad !== undefined) {
      sink.release();
      return bad;
    }
  }
  return sink.finish();
}

describe('StreamUnpack', () => {
  const raw = Buffer.concat([
    backupLikeData(3 * ZERO_BLOCK, 7),
    Buffer.alloc(2 * ZERO_BLOCK),
    Buffer.from('tail'),
  ]);
  const { stored, sha256 } = storedChunk(raw);
  const expect0 = { stored_bytes: stored.length, raw_bytes: raw.length, sha256, name: 'chunk-00003' };

  it('unpacks a chunk fed in socket-sized pieces, with its all-zero blocks mapped', () => {
    for (const piece of [1, 1000, 65536, stored.length]) {
      const out = new Uint8Array(raw.length);
      const sink = new StreamUnpack(out, expect0);
      expect(feed(sink, stored, piece)).toBeUndefined();
      expect(Buffer.from(out).equals(raw)).toBe(true);
      expect([...sink.zero]).toEqual([0, 0, 0, 1, 1, 0]);
    }
  });

  it('refuses a changed byte, naming the chunk', () => {
    const bad = Buffer.from(stored);
    const mid = bad.length >> 1;
    bad.writeUInt8(bad.readUInt8(mid) ^ 0xff, mid);
    const verdict = feed(new StreamUnpack(new Uint8Array(raw.length), expect0), bad, 4096);
    expect(verdict).toMatch(/^chunk-00003: /);
  });

  it('refuses a cut-off frame and a frame longer than the manifest says', () => {
    const cut = stored.subarray(0, stored.length - 10);
    const short = {
      ...expect0,
      stored_bytes: cut.length,
      sha256: createHash('sha256').update(cut).digest('hex'),
    };
    expect(feed(new StreamUnpack(new Uint8Array(raw.length), short), cut, 4096)).toMatch(
      /unfinished frame|does not decompress/,
    );
    const smaller = { ...expect0, raw_bytes: raw.length - 1 };
    expect(feed(new StreamUnpack(new Uint8Array(raw.length - 1), smaller), stored, 4096)).toMatch(
      /more than the manifest's|does not decompress/,
    );
  });

  it('refuses bytes after the frame', () => {
    const longer = Buffer.concat([stored, Buffer.from([1, 2, 3])]);
    const e = {
      ...expect0,
      stored_bytes: longer.length,
      sha256: createHash('sha256').update(longer).digest('hex'),
    };
    expect(feed(new StreamUnpack(new Uint8Array(raw.length), e), longer, 4096)).toMatch(
      /after its zstd frame|does not decompress/,
    );
  });
});
