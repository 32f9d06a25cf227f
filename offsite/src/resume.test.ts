import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CopyObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecPool } from './codec/codec-pool.js';
import { OffsiteError } from './errors.js';
import { exportCartridge, type ExportOptions } from './export.js';
import { importCartridge } from './import.js';
import type { GenerationRef } from './layout.js';
import { s3For } from './remote.js';
import type { LedgerEntry } from './schemas.js';
import { CARTRIDGE_BASE_FILES as CARTRIDGE_FILES } from '@vtl/api';
import { backupLikeData, makeTestCartridge } from './testing/cartridge-fixture.js';
import { startTestRgw, type TestRgw } from './testing/rgw.js';
import { verifyGeneration } from './verify.js';

const MiB = 1024 * 1024;
const CHUNK = 256 * 1024;

let rgw: TestRgw;
let work: string;
let codec: CodecPool;

beforeAll(async () => {
  rgw = await startTestRgw();
  work = await mkdtemp(join(tmpdir(), 'vtl-offsite-resume-'));
  codec = new CodecPool();
});

afterAll(async () => {
  await codec?.close();
  await rgw?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const ref = (label: string): GenerationRef => ({
  system: 'sys-a',
  library_serial: 'LIB001',
  label,
  generation: '20260202T000000Z',
});

async function cartridge(label: string): Promise<string> {
  return makeTestCartridge(join(work, 'src', label), {
    label,
    dataBytes: 5 * MiB,
    extents: [{ offset: 0, bytes: backupLikeData(4 * MiB, 11) }],
  });
}

function options(
  label: string,
  dir: string,
  ledger: LedgerEntry[],
  more: Partial<ExportOptions> = {},
): ExportOptions {
  return {
    remote: rgw.remote('resume'),
    ref: ref(label),
    dir,
    ledger: [...ledger],
    codec,
    chunkBytes: CHUNK,
    onChunk: async (entry) => {
      ledger.push(entry);
    },
    ...more,
  };
}

/** Marks an object in place (same bytes, one more metadata field): a re-upload would drop it. */
async function mark(key: string): Promise<void> {
  const s3 = s3For(rgw.remote());
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: key }));
    await s3.send(
      new CopyObjectCommand({
        Bucket: rgw.bucket,
        Key: key,
        CopySource: `${rgw.bucket}/${key}`,
        MetadataDirective: 'REPLACE',
        Metadata: { ...head.Metadata, marker: 'first-attempt' },
      }),
    );
  } finally {
    s3.destroy();
  }
}

async function marked(key: string): Promise<boolean> {
  const s3 = s3For(rgw.remote());
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: rgw.bucket, Key: key }));
    return head.Metadata?.marker === 'first-attempt';
  } finally {
    s3.destroy();
  }
}

async function expectRoundTrip(label: string, src: string): Promise<void> {
  const dest = join(work, `dest-${label}`);
  await importCartridge({ remote: rgw.remote('resume'), ref: ref(label), dir: dest, codec });
  for (const f of CARTRIDGE_FILES) {
    const [a, b] = await Promise.all([readFile(join(src, f)), readFile(join(dest, f))]);
    expect(createHash('sha256').update(b).digest('hex'), f).toBe(
      createHash('sha256').update(a).digest('hex'),
    );
  }
}

describe('resuming an interrupted export', () => {
  it('uploads only the chunks missing from the ledger after onChunk failed', async () => {
    const src = await cartridge('RES001L8');
    const ledger: LedgerEntry[] = [];
    const first = options('RES001L8', src, ledger);
    const persist = first.onChunk;
    first.onChunk = async (entry, progress) => {
      if (entry.n === 5) throw new Error('etcd went away');
      await persist(entry, progress);
    };
    await expect(exportCartridge(first)).rejects.toThrow('etcd went away');
    expect(ledger.map((e) => e.n)).toEqual([0, 1, 2, 3, 4]);
    for (const e of ledger) await mark(e.key);

    const resumedCalls: number[] = [];
    const second = options('RES001L8', src, ledger);
    second.onChunk = async (entry) => {
      resumedCalls.push(entry.n);
      ledger.push(entry);
    };
    const manifest = await exportCartridge(second);
    expect(resumedCalls[0]).toBe(5);
    expect(resumedCalls.at(-1)).toBe(manifest.chunks.length - 1);
    for (const e of manifest.chunks.slice(0, 5)) expect(await marked(e.key), e.key).toBe(true);
    expect(await marked((manifest.chunks[5] as LedgerEntry).key)).toBe(false);
    await verifyGeneration({ remote: rgw.remote('resume'), ref: ref('RES001L8'), codec });
    await expectRoundTrip('RES001L8', src);
  });

  it('fails with unreachable when S3 stops mid-export, and a later run with the ledger completes', async () => {
    const src = await cartridge('RES002L8');
    const ledger: LedgerEntry[] = [];
    const first = options('RES002L8', src, ledger);
    const persist = first.onChunk;
    first.onChunk = async (entry, progress) => {
      await persist(entry, progress);
      if (entry.n === 2) await rgw.stopGateway();
    };
    let err: unknown;
    try {
      await exportCartridge(first);
    } catch (e) {
      err = e;
    } finally {
      await rgw.startGateway();
    }
    expect(err).toBeInstanceOf(OffsiteError);
    expect(err).toMatchObject({ code: 'unreachable', message: expect.stringContaining('unreachable') });
    expect(ledger.length).toBeGreaterThanOrEqual(3);

    const done = ledger.length;
    const resumed: number[] = [];
    const manifest = await exportCartridge(
      options('RES002L8', src, ledger, {
        onChunk: async (entry) => {
          resumed.push(entry.n);
        },
      }),
    );
    expect(resumed[0]).toBe(done);
    expect(manifest.chunks.length).toBe(done + resumed.length);
    await expectRoundTrip('RES002L8', src);
  });

  it('stops with aborted when the signal fires', async () => {
    const src = await cartridge('RES003L8');
    const abort = new AbortController();
    const ledger: LedgerEntry[] = [];
    const opts = options('RES003L8', src, ledger, { signal: abort.signal });
    const persist = opts.onChunk;
    opts.onChunk = async (entry, progress) => {
      await persist(entry, progress);
      if (entry.n === 1) abort.abort();
    };
    await expect(exportCartridge(opts)).rejects.toMatchObject({ code: 'aborted' });
    expect(ledger.length).toBeLessThan(Math.ceil((5 * MiB) / CHUNK));
  });

  it('refuses a ledger written with another chunk size', async () => {
    const src = await cartridge('RES004L8');
    const ledger: LedgerEntry[] = [];
    const first = options('RES004L8', src, ledger);
    const persist = first.onChunk;
    first.onChunk = async (entry, progress) => {
      await persist(entry, progress);
      if (entry.n === 1) throw new Error('stop here');
    };
    await expect(exportCartridge(first)).rejects.toThrow('stop here');
    await expect(
      exportCartridge(options('RES004L8', src, ledger, { chunkBytes: 2 * CHUNK })),
    ).rejects.toMatchObject({
      code: 'invalid',
    });
  });
});
