import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectRetentionCommand,
  ListObjectVersionsCommand,
  PutObjectLockConfigurationCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecPool } from './codec/codec-pool.js';
import { exportCartridge } from './export.js';
import { newGeneration } from './layout.js';
import { DEFAULT_WORM_RETENTION_DAYS } from './object-lock.js';
import { s3For, type RemoteConnection } from './remote.js';
import { makeTestCartridge } from './testing/cartridge-fixture.js';
import { startTestRgw, type TestRgw } from './testing/rgw.js';

let rgw: TestRgw;
let work: string;
let codec: CodecPool;
const LOCKED = 'vtl-locked';
const LOCKED_DEFAULT = 'vtl-locked-default';

beforeAll(async () => {
  rgw = await startTestRgw();
  work = await mkdtemp(join(tmpdir(), 'vtl-offsite-lock-'));
  codec = new CodecPool({ threads: 1 });
  const s3 = s3For(rgw.remote());
  try {
    // Object Lock can only be enabled when a bucket is created.
    for (const b of [LOCKED, LOCKED_DEFAULT]) {
      await s3.send(new CreateBucketCommand({ Bucket: b, ObjectLockEnabledForBucket: true }));
    }
    await s3.send(
      new PutObjectLockConfigurationCommand({
        Bucket: LOCKED_DEFAULT,
        ObjectLockConfiguration: {
          ObjectLockEnabled: 'Enabled',
          Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 2 } },
        },
      }),
    );
  } finally {
    s3.destroy();
  }
}, 120_000);

afterAll(async () => {
  await codec?.close();
  await rgw?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

async function cartridge(label: string, worm: boolean): Promise<string> {
  const dir = await makeTestCartridge(join(work, label), {
    label,
    dataBytes: 50_000,
    extents: [{ offset: 0, bytes: Buffer.alloc(20_000, 7) }],
  });
  const meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8'));
  await writeFile(join(dir, 'meta.json'), JSON.stringify({ ...meta, worm }));
  return dir;
}

/** Exports and answers each stored object's retention (undefined: none). */
async function exported(bucket: string, label: string, worm: boolean) {
  const remote: RemoteConnection = { ...rgw.remote('lock'), bucket };
  const ref = { system: 'sys-l', library_serial: 'LIB7', label, generation: newGeneration() };
  const dir = await cartridge(label, worm);
  await exportCartridge({ remote, ref, dir, ledger: [], codec, onChunk: async () => {} });
  const s3 = s3For(remote);
  try {
    const versions = await s3.send(
      new ListObjectVersionsCommand({ Bucket: bucket, Prefix: `lock/sys-l/LIB7/${label}/` }),
    );
    const out: Array<{ key: string; version: string; mode?: string; until?: Date }> = [];
    for (const v of versions.Versions ?? []) {
      const r = await s3
        .send(new GetObjectRetentionCommand({ Bucket: bucket, Key: v.Key!, VersionId: v.VersionId! }))
        .catch(() => undefined);
      out.push({
        key: v.Key!,
        version: v.VersionId!,
        mode: r?.Retention?.Mode,
        until: r?.Retention?.RetainUntilDate,
      });
    }
    return { objects: out, s3 };
  } catch (err) {
    s3.destroy();
    throw err;
  }
}

const DAY = 86_400_000;

describe('WORM copies with S3 Object Lock', () => {
  it("writes a WORM cartridge's chunks and manifest with COMPLIANCE retention that refuses a delete", async () => {
    const { objects, s3 } = await exported(LOCKED, 'WRM001LY', true);
    try {
      expect(objects.map((o) => o.key.split('/').at(-1)).sort()).toEqual([
        'chunk-00000.tar.zst',
        'manifest.json',
      ]);
      for (const o of objects) {
        expect(o.mode, o.key).toBe('COMPLIANCE');
        const days = (o.until!.getTime() - Date.now()) / DAY;
        expect(days).toBeGreaterThan(DEFAULT_WORM_RETENTION_DAYS - 1);
        expect(days).toBeLessThan(DEFAULT_WORM_RETENTION_DAYS + 1);
      }
      // The locked version cannot be deleted, not even by the bucket's owner.
      const chunk = objects.find((o) => o.key.endsWith('.zst'))!;
      await expect(
        s3.send(new DeleteObjectCommand({ Bucket: LOCKED, Key: chunk.key, VersionId: chunk.version })),
      ).rejects.toThrow();
    } finally {
      s3.destroy();
    }
  });

  it("follows the bucket's default retention rule for mode and period", async () => {
    const { objects, s3 } = await exported(LOCKED_DEFAULT, 'WRM002LY', true);
    s3.destroy();
    for (const o of objects) {
      expect(o.mode).toBe('GOVERNANCE');
      expect(Math.round((o.until!.getTime() - Date.now()) / DAY)).toBe(2);
    }
  });

  it('leaves rewritable cartridges unlocked, and WORM copies on a bucket without Object Lock as they were', async () => {
    const plain = await exported(LOCKED, 'RWR001L8', false);
    plain.s3.destroy();
    expect(plain.objects.every((o) => o.mode === undefined)).toBe(true);
    const noLock = await exported(rgw.bucket, 'WRM003LY', true);
    noLock.s3.destroy();
    expect(noLock.objects.length).toBe(2);
    expect(noLock.objects.every((o) => o.mode === undefined)).toBe(true);
  });
});
