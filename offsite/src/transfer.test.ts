import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecPool } from './codec/codec-pool.js';
import { OffsiteError } from './errors.js';
import { exportCartridge } from './export.js';
import { importCartridge } from './import.js';
import { chunkName, keysOf, type GenerationRef } from './layout.js';
import { s3For } from './remote.js';
import { CARTRIDGE_BASE_FILES as CARTRIDGE_FILES } from '@vtl/api';
import { backupLikeData, makeTestCartridge } from './testing/cartridge-fixture.js';
import { startTestRgw, type TestRgw } from './testing/rgw.js';
import { verifyGeneration } from './verify.js';
import type { LedgerEntry } from './schemas.js';

const MiB = 1024 * 1024;
const CHUNK = 256 * 1024;

let rgw: TestRgw;
let work: string;
let codec: CodecPool;

beforeAll(async () => {
  rgw = await startTestRgw();
  work = await mkdtemp(join(tmpdir(), 'vtl-offsite-'));
  codec = new CodecPool();
});

afterAll(async () => {
  await codec?.close();
  await rgw?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const ref = (label: string, generation = '20260101T000000Z'): GenerationRef => ({
  system: 'sys-a',
  library_serial: 'LIB001',
  label,
  generation,
});

async function fileHash(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

/** A 6 MiB data file: random and backup-like extents between holes, ending in a hole. */
async function sparseCartridge(label: string): Promise<string> {
  return makeTestCartridge(join(work, 'src', label), {
    label,
    dataBytes: 6 * MiB + 123,
    extents: [
      { offset: 0, bytes: backupLikeData(700 * 1024, 7) },
      { offset: 2 * MiB + 17, bytes: Buffer.from(createHash('sha512').update(label).digest()) },
      { offset: 3 * MiB, bytes: backupLikeData(1 * MiB + 5, 9) },
    ],
  });
}

async function exportAll(label: string, dir: string, generation?: string) {
  const ledger: LedgerEntry[] = [];
  const manifest = await exportCartridge({
    remote: rgw.remote('vtl'),
    ref: ref(label, generation),
    dir,
    ledger: [],
    codec,
    chunkBytes: CHUNK,
    onChunk: async (entry) => {
      ledger.push(entry);
    },
  });
  return { manifest, ledger };
}

describe('export and import against a real RGW', () => {
  it('round-trips a sparse cartridge byte for byte and keeps the holes', async () => {
    const src = await sparseCartridge('RTP001L8');
    const { manifest, ledger } = await exportAll('RTP001L8', src);
    expect(manifest.logical_bytes).toBe(6 * MiB + 123);
    expect(manifest.chunks.map((c) => c.n)).toEqual(ledger.map((e) => e.n));
    expect(manifest.chunks.length).toBe(Math.ceil(manifest.tar_bytes / CHUNK));
    expect(manifest.stored_bytes).toBeLessThan(manifest.tar_bytes);

    const dest = join(work, 'dest-rtp');
    const progress: number[] = [];
    const imported = await importCartridge({
      remote: rgw.remote('vtl'),
      ref: ref('RTP001L8'),
      dir: dest,
      codec,
      onProgress: (p) => progress.push(p.bytes_done),
    });
    expect(imported.chunks_sha256).toBe(manifest.chunks_sha256);
    expect(progress.at(-1)).toBe(manifest.tar_bytes);
    expect((await readdir(dest)).sort()).toEqual([...CARTRIDGE_FILES].sort());
    for (const f of CARTRIDGE_FILES)
      expect(await fileHash(join(dest, f)), f).toBe(await fileHash(join(src, f)));
    const st = await stat(join(dest, 'data'));
    expect(st.size).toBe(6 * MiB + 123);
    // Holes stay holes: far less is allocated than the logical size.
    expect(st.blocks * 512).toBeLessThan(3 * MiB);
  });

  it('gives identical chunks for two exports of the same cartridge', async () => {
    const src = await sparseCartridge('DET001L8');
    const a = await exportAll('DET001L8', src, '20260101T000001Z');
    const b = await exportAll('DET001L8', src, '20260101T000002Z');
    expect(b.manifest.chunks.map((c) => c.sha256)).toEqual(a.manifest.chunks.map((c) => c.sha256));
    expect(b.manifest.chunks_sha256).toBe(a.manifest.chunks_sha256);
  });

  it('refuses a corrupted chunk in verify and import, naming it, and leaves the destination alone', async () => {
    const src = await sparseCartridge('BAD001L8');
    const { manifest } = await exportAll('BAD001L8', src);
    const r = ref('BAD001L8');
    await expect(verifyGeneration({ remote: rgw.remote('vtl'), ref: r, codec })).resolves.toMatchObject({
      tar_bytes: manifest.tar_bytes,
    });

    // Same size, one byte flipped: only the hash can tell.
    const victim = manifest.chunks[3] as LedgerEntry;
    const s3 = s3For(rgw.remote('vtl'));
    const res = await s3.send(new GetObjectCommand({ Bucket: rgw.bucket, Key: victim.key }));
    const body = Buffer.from((await res.Body?.transformToByteArray()) ?? []);
    const mid = body.length >> 1;
    body.writeUInt8((body.readUInt8(mid) ^ 0xff) & 0xff, mid);
    await s3.send(
      new PutObjectCommand({
        Bucket: rgw.bucket,
        Key: victim.key,
        Body: body,
        ContentLength: body.length,
        Metadata: res.Metadata,
      }),
    );
    s3.destroy();

    const verifyErr = await verifyGeneration({ remote: rgw.remote('vtl'), ref: r, codec }).catch(
      (e: unknown) => e,
    );
    expect(verifyErr).toBeInstanceOf(OffsiteError);
    expect(verifyErr).toMatchObject({
      code: 'verify_failed',
      message: expect.stringContaining(chunkName(3)),
    });

    const fresh = join(work, 'dest-bad-fresh');
    const importErr = await importCartridge({ remote: rgw.remote('vtl'), ref: r, dir: fresh, codec }).catch(
      (e: unknown) => e,
    );
    expect(importErr).toMatchObject({
      code: 'verify_failed',
      message: expect.stringContaining(chunkName(3)),
    });
    await expect(stat(fresh)).rejects.toThrow(/ENOENT/);

    const existing = await mkdtemp(join(work, 'dest-bad-existing-'));
    await expect(
      importCartridge({ remote: rgw.remote('vtl'), ref: r, dir: existing, codec }),
    ).rejects.toMatchObject({
      code: 'verify_failed',
    });
    expect(await readdir(existing)).toEqual([]);
  });

  it('fails an import with unreachable when S3 stops mid-way, and removes what it wrote', async () => {
    const src = await sparseCartridge('UNR001L8');
    await exportAll('UNR001L8', src);
    const dest = join(work, 'dest-unreachable');
    let err: unknown;
    try {
      await importCartridge({
        remote: rgw.remote('vtl'),
        ref: ref('UNR001L8'),
        dir: dest,
        codec,
        onProgress: (p) => {
          if (p.chunks_done === 1) void rgw.stopGateway();
        },
      });
    } catch (e) {
      err = e;
    } finally {
      await rgw.startGateway();
    }
    expect(err).toMatchObject({ code: 'unreachable', message: expect.stringContaining('chunk-') });
    await expect(stat(dest)).rejects.toThrow(/ENOENT/);
    await importCartridge({ remote: rgw.remote('vtl'), ref: ref('UNR001L8'), dir: dest, codec });
    expect(await fileHash(join(dest, 'data'))).toBe(await fileHash(join(src, 'data')));
  });

  it('reports a missing chunk and a missing generation', async () => {
    const src = await sparseCartridge('MIS001L8');
    const { manifest } = await exportAll('MIS001L8', src);
    const s3 = s3For(rgw.remote('vtl'));
    await s3.send(
      new DeleteObjectCommand({ Bucket: rgw.bucket, Key: (manifest.chunks[1] as LedgerEntry).key }),
    );
    s3.destroy();
    await expect(
      verifyGeneration({ remote: rgw.remote('vtl'), ref: ref('MIS001L8'), codec }),
    ).rejects.toMatchObject({
      code: 'verify_failed',
      message: expect.stringContaining(
        `${chunkName(1)} of ${keysOf(rgw.remote('vtl')).generation(ref('MIS001L8'))} is missing`,
      ),
    });
    await expect(
      verifyGeneration({ remote: rgw.remote('vtl'), ref: ref('MIS001L8', '20300101T000000Z'), codec }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses to export an evicted stub or into a non-empty staging directory', async () => {
    const stub = await makeTestCartridge(join(work, 'src', 'STB001L8'), {
      label: 'STB001L8',
      dataBytes: 0,
      stub: true,
    });
    await expect(
      exportCartridge({
        remote: rgw.remote('vtl'),
        ref: ref('STB001L8'),
        dir: stub,
        ledger: [],
        codec,
        onChunk: async () => {},
      }),
    ).rejects.toMatchObject({ code: 'stub' });

    const src = await sparseCartridge('NEM001L8');
    await exportAll('NEM001L8', src);
    await expect(
      importCartridge({ remote: rgw.remote('vtl'), ref: ref('NEM001L8'), dir: src, codec }),
    ).rejects.toMatchObject({ code: 'invalid' });
  });

  it('keeps a large sparse data file sparse through export and import', async () => {
    const label = 'BIG001L8';
    const src = await makeTestCartridge(join(work, 'src', label), {
      label,
      dataBytes: 200 * MiB,
      extents: [
        { offset: 0, bytes: backupLikeData(MiB, 3) },
        { offset: 150 * MiB + 3, bytes: backupLikeData(MiB, 4) },
      ],
    });
    const manifest = await exportCartridge({
      remote: rgw.remote('vtl'),
      ref: ref(label),
      dir: src,
      ledger: [],
      codec,
      chunkBytes: 16 * MiB,
      onChunk: async () => {},
    });
    expect(manifest.stored_bytes).toBeLessThan(4 * MiB);
    const dest = join(work, 'dest-big');
    await importCartridge({ remote: rgw.remote('vtl'), ref: ref(label), dir: dest, codec });
    expect(await fileHash(join(dest, 'data'))).toBe(await fileHash(join(src, 'data')));
    expect((await stat(join(dest, 'data'))).blocks * 512).toBeLessThan(8 * MiB);
  });
});
