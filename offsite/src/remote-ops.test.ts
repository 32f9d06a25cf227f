import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanBucket, readTopology, writeSystemFile, writeTopology, readSystemFile } from './catalog.js';
import { headChunk, putChunk } from './chunk-store.js';
import { CodecPool } from './codec/codec-pool.js';
import { exportCartridge } from './export.js';
import { GENERATION, newGeneration, type GenerationRef } from './layout.js';
import { deleteFolder, listObjects } from './objects.js';
import { probeRemote } from './probe.js';
import { s3For } from './remote.js';
import { makeTestCartridge } from './testing/cartridge-fixture.js';
import { startTestRgw, type TestRgw } from './testing/rgw.js';

let rgw: TestRgw;
let work: string;
let codec: CodecPool;

beforeAll(async () => {
  rgw = await startTestRgw();
  work = await mkdtemp(join(tmpdir(), 'vtl-offsite-ops-'));
  codec = new CodecPool({ threads: 1 });
});

afterAll(async () => {
  await codec?.close();
  await rgw?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

async function put(prefix: string, key: string, body = 'x'): Promise<void> {
  const s3 = s3For(rgw.remote(prefix));
  try {
    await s3.send(
      new PutObjectCommand({
        Bucket: rgw.bucket,
        Key: `${prefix}/${key}`,
        Body: body,
        ContentLength: body.length,
      }),
    );
  } finally {
    s3.destroy();
  }
}

describe('probeRemote', () => {
  it('writes, reads back and deletes a probe object under the prefix', async () => {
    const res = await probeRemote(rgw.remote('probe'));
    expect(res).toMatchObject({ ok: true, detail: expect.stringContaining('probe/.vtl-probe-') });
    expect(await listObjects(rgw.remote('probe'))).toEqual([]);
  });

  it('says why it failed: wrong secret, missing bucket, server down', async () => {
    const denied = await probeRemote({ ...rgw.remote(), secret_key: 'not-the-secret' });
    expect(denied.ok).toBe(false);
    expect(denied.detail).toMatch(/^access_denied: .*check the access key, secret key/);

    const noBucket = await probeRemote({ ...rgw.remote(), bucket: 'no-such-bucket' });
    expect(noBucket.ok).toBe(false);
    expect(noBucket.detail).toMatch(/^not_found: .*bucket no-such-bucket .* does not exist/);

    await rgw.stopGateway();
    try {
      const down = await probeRemote(rgw.remote());
      expect(down.ok).toBe(false);
      expect(down.detail).toMatch(/^unreachable: .*ECONNREFUSED/);
    } finally {
      await rgw.startGateway();
    }
    expect((await probeRemote(rgw.remote())).ok).toBe(true);
  });
});

describe('a hung S3 server', () => {
  it('is reported as unreachable once the request times out', async () => {
    const s3 = s3For(rgw.remote(), { maxAttempts: 1, idleTimeoutMs: 1_000 });
    rgw.pause();
    try {
      await expect(headChunk(s3, rgw.remote(), 'any-key')).rejects.toMatchObject({
        code: 'unreachable',
        message: expect.stringContaining('is unreachable'),
      });
    } finally {
      rgw.resume();
      s3.destroy();
    }
    expect((await probeRemote(rgw.remote())).ok).toBe(true);
  });
});

describe('listObjects and deleteFolder', () => {
  it('lists keys relative to the prefix across pages and deletes only whole folders', async () => {
    // More than one ListObjectsV2 page (1000 keys) and one DeleteObjects batch.
    const many = Array.from(
      { length: 1005 },
      (_, i) => `sys/LIB/AAA000L8/20260101T000000Z/chunk-${String(i).padStart(5, '0')}.tar.zst`,
    );
    for (let i = 0; i < many.length; i += 50)
      await Promise.all(many.slice(i, i + 50).map((k) => put('lst', k)));
    await put('lst', 'sys/LIB/AAA0001/keep.txt', 'keep');
    await put('other', 'sys/LIB/AAA000L8/outside.txt');

    const listed = await listObjects(rgw.remote('lst'));
    expect(listed).toHaveLength(1006);
    expect(listed).toContainEqual({ key: 'sys/LIB/AAA0001/keep.txt', size: 4 });
    expect(listed.every((o) => !o.key.startsWith('lst/'))).toBe(true);

    await expect(deleteFolder(rgw.remote('lst'), 'sys/LIB/AAA000L8')).rejects.toMatchObject({
      code: 'invalid',
    });
    expect(await deleteFolder(rgw.remote('lst'), 'sys/LIB/AAA000L8/')).toBe(1005);
    expect(await listObjects(rgw.remote('lst'))).toEqual([{ key: 'sys/LIB/AAA0001/keep.txt', size: 4 }]);
    expect(await listObjects(rgw.remote('other'))).toHaveLength(1);
  });
});

describe('scanBucket and bucket records', () => {
  it('finds complete generations by their manifest and reports folders without one', async () => {
    const remote = rgw.remote('/scan/');
    const dir = await makeTestCartridge(join(work, 'SCN001L8'), { label: 'SCN001L8', dataBytes: 100_000 });
    const ref: GenerationRef = {
      system: 'sys-a',
      library_serial: 'LIB9',
      label: 'SCN001L8',
      generation: '20260301T101010Z',
    };
    const manifest = await exportCartridge({ remote, ref, dir, ledger: [], codec, onChunk: async () => {} });
    // An interrupted export: a chunk, no manifest.
    await put('scan', 'sys-a/LIB9/SCN002L8/20260301T111111Z/chunk-00000.tar.zst');
    // Not generation folders: ignored.
    await put('scan', 'sys-a/LIB9/topology.json');
    await put('scan', 'sys-a/LIB9/SCN003L8/not-a-generation/chunk-00000.tar.zst');

    const scan = await scanBucket(remote);
    expect(scan.complete).toEqual([
      {
        ...ref,
        logical_bytes: 100_000,
        stored_bytes: manifest.stored_bytes,
        chunk_count: manifest.chunks.length,
        exported_at: manifest.created_at,
      },
    ]);
    expect(scan.incomplete).toEqual([
      { system: 'sys-a', library_serial: 'LIB9', label: 'SCN002L8', generation: '20260301T111111Z' },
    ]);
  });

  it('writes and reads topology.json and .vtl-system.json', async () => {
    const remote = rgw.remote('records');
    expect(await readTopology(remote, 'sys-b', 'LIB7')).toBeUndefined();
    const topology = {
      system: 'sys-b',
      library_serial: 'LIB7',
      name: 'main',
      product: '3573-TL',
      vendor: 'IBM',
      drive_product: 'ULT3580-HH8',
      num_drives: 2,
      num_slots: 20,
      num_map: 4,
      label_prefix: 'ABC',
      written_at: '2026-03-01T00:00:00Z',
      cartridges: [{ label: 'ABC000L8', home_slot: 1 }],
    };
    await writeTopology(remote, topology);
    expect(await readTopology(remote, 'sys-b', 'LIB7')).toEqual({ format: 1, ...topology });
    await writeSystemFile(remote, {
      system: 'sys-b',
      uuid: 'u-1',
      version: 'v1.0.0',
      written_at: '2026-03-01T00:00:00Z',
    });
    expect(await readSystemFile(remote, 'sys-b')).toMatchObject({ format: 1, uuid: 'u-1' });
    expect((await listObjects(remote)).map((o) => o.key).sort()).toEqual([
      'sys-b/.vtl-system.json',
      'sys-b/LIB7/topology.json',
    ]);
  });

  it('names generations YYYYMMDDTHHMMSSZ in UTC', () => {
    const g = newGeneration(new Date('2026-01-15T09:30:05.123Z'));
    expect(g).toBe('20260115T093005Z');
    expect(GENERATION.test(g)).toBe(true);
  });
});

describe('chunk uploads', () => {
  it('are refused by S3 when a byte arrives different from the signed SHA-256', async () => {
    const s3 = s3For(rgw.remote());
    try {
      const body = Buffer.from('the bytes that were hashed');
      const wrong = '0'.repeat(64);
      await expect(putChunk(s3, rgw.remote(), 'hash-check/chunk-00000.tar.zst', body, wrong)).rejects.toThrow(
        /XAmzContentSHA256Mismatch|BadDigest|400/,
      );
    } finally {
      s3.destroy();
    }
  });
});
