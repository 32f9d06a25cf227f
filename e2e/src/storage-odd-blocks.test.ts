import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Cartridge } from '@vtl/emulator';
import { writeStreamImage } from '@vtl/emulator/testing/stream-image';
import * as btrfs from '@vtl/nodeagent/storage/btrfs';
import { duperemoveArgs, hashFile } from '@vtl/nodeagent/storage/dedup-pass';
import { backupLikeData } from '@vtl/offsite/testing/cartridge-fixture';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopDevices, btrfsSkipReason } from './harness/loop-devices.js';

const MiB = 1024 ** 2;
/** Per cartridge: a few tens of MiB keep the file well under a minute on a busy machine. */
const STREAM = 24 * MiB;
const ODD_BLOCK = 65_000;
const TAPE_BLOCK = 256 * 1024;

function skipReason(): string | undefined {
  const btrfsSkip = btrfsSkipReason();
  if (btrfsSkip) return btrfsSkip;
  try {
    execFileSync('sh', ['-c', 'command -v duperemove'], { stdio: 'ignore' });
  } catch {
    return 'duperemove is not installed (sudo bash scripts/install-test-deps.sh)';
  }
  return undefined;
}
const skip = skipReason();

/**
 * Blocks whose length is not a multiple of 4 KiB on a compressing btrfs pool (docs/storage.md):
 * the same backup stream written in 65,000-byte blocks to two cartridges, through the image
 * writer as the iSCSI transport hands it blocks (each in an aligned slot), compresses about as
 * well as in 256 KiB blocks and is shared by the nodeagent's dedup pass at about 2x.
 */
describe.skipIf(skip)(`odd-sized blocks on btrfs${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const loops = new LoopDevices();
  const mountpoint = path.join(loops.dir, 'storage');
  const pool = path.join(mountpoint, 'pools', 'odd');
  const stream = backupLikeData(STREAM, 11);

  beforeAll(async () => {
    const device = loops.attach(2 * 1024 * MiB);
    await btrfs.mkfs([device], false);
    await fs.mkdir(mountpoint);
    await btrfs.mount(device, mountpoint);
    loops.unmountAtRelease(mountpoint);
    await fs.mkdir(path.dirname(pool));
    await btrfs.createSubvolume(pool);
    await btrfs.setCompression(pool, 'zstd:3');
  });

  afterAll(() => loops.release());

  /** Writes the stream in `blockBytes` blocks after the label, then a filemark; the image directory. */
  const writeCartridge = (label: string, blockBytes: number) =>
    writeStreamImage(path.join(pool, 'lib'), label, stream, blockBytes);

  /** The nodeagent's dedup pass (its duperemove arguments) over the given images. */
  async function dedupPass(dirs: string[]): Promise<void> {
    const files = (
      await Promise.all(dirs.map(async (d) => (await fs.readdir(d)).map((f) => path.join(d, f))))
    ).flat();
    const child = spawn('nice', duperemoveArgs(mountpoint, files), { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-2000)));
    const [code] = await once(child, 'close');
    expect(code, stderr).toBe(0);
  }

  it('compresses 65,000-byte blocks as 256 KiB ones and shares two such cartridges at 2x', async () => {
    const reference = await writeCartridge('REF000L8', TAPE_BLOCK);
    const ref = await btrfs.extentBytes([reference]);
    const odd = [await writeCartridge('ODD000L8', ODD_BLOCK), await writeCartridge('ODD001L8', ODD_BLOCK)];
    const before = await btrfs.extentBytes(odd);
    await fs.mkdir(path.dirname(hashFile(mountpoint)), { recursive: true });
    await dedupPass(odd);
    const after = await btrfs.extentBytes(odd);
    // As the pool reports them (docs/storage.md): compression before any sharing, then the
    // pass's dedup_ratio and the share of the written bytes left allocated.
    const figures = {
      compressionRef: ref.uncompressed / ref.disk,
      compression: before.uncompressed / before.disk,
      dedup: after.referenced / after.uncompressed,
      allocated: after.disk / after.referenced,
    };
    const shown = JSON.stringify(figures);
    // Measured 1.71x against 1.38x. Before padding (blocks back to back through the page
    // cache) this stream compressed 1.22x here; 1.05x against 1.47x in the 128 MiB bench.
    expect(figures.compression, shown).toBeGreaterThanOrEqual(0.95 * figures.compressionRef);
    expect(figures.dedup, shown).toBeGreaterThanOrEqual(1.9);
    // Every block reads back byte-identical after the pass.
    const cart = await Cartridge.open(odd[1]!);
    try {
      await cart.locate(2);
      const read: Buffer[] = [];
      for (;;) {
        const r = await cart.readBlock(ODD_BLOCK);
        if (r.kind !== 'data') break;
        read.push(Buffer.from(r.data));
      }
      expect(Buffer.concat(read).equals(stream)).toBe(true);
    } finally {
      await cart.close();
    }
  });
});
