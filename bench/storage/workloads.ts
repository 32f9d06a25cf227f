import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { backupLikeData } from '@vtl/offsite/testing/cartridge-fixture';

const exec = promisify(execFile);

/** Tape block of every workload: what backup software commonly writes to LTO (tar -b 512). */
export const TAPE_BLOCK = 256 * 1024;

/** One workload: two host streams (a first and a second backup), each written to its own cartridge. */
export interface Workload {
  name: string;
  /** How the second stream differs from the first. */
  what: string;
  streams: [Buffer, Buffer];
}

/** xorshift32 from a seed: reproducible choices (file sizes, which files change). */
function prng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

/** Two full backups of unchanged data: the same stream twice. */
export function identicalFulls(bytes: number): Workload {
  const stream = backupLikeData(bytes, 31);
  return { name: 'identical full backups', what: 'the same stream twice', streams: [stream, stream] };
}

/**
 * A file tree (sizes log-normal around 16 KiB, up to 4 MiB; the offsite benchmark's
 * backup-like contents) archived by GNU tar in 256 KiB records, then 1 % of its files edited
 * (a line of text inserted at a random place: the file grows, everything after it in the
 * archive moves by a few dozen bytes) and archived again.
 */
export async function tarTwice(bytes: number, scratch: string): Promise<Workload> {
  const root = await mkdtemp(join(scratch, 'tree-'));
  try {
    const rand = prng(7);
    const files: string[] = [];
    for (let total = 0, i = 0; total < bytes * 0.97; i++) {
      // Box-Muller: a normal deviate, then e^(mu + sigma z) around 16 KiB.
      const z = Math.sqrt(-2 * Math.log(rand() || 1e-9)) * Math.cos(2 * Math.PI * rand());
      const size = Math.min(4 * 2 ** 20, Math.max(1, Math.round(Math.exp(Math.log(16 * 1024) + 1.5 * z))));
      const file = join(root, `d${i % 37}`, `f${i}.dat`);
      await mkdir(join(root, `d${i % 37}`), { recursive: true });
      await writeFile(file, backupLikeData(size, i + 1));
      files.push(file);
      total += size;
    }
    const tar = async (out: string) => {
      await exec('tar', ['--sort=name', '-b', '512', '-cf', out, '-C', root, '.']);
      return readFile(out);
    };
    const first = await tar(join(scratch, 'first.tar'));
    const changed = Math.max(1, Math.round(files.length / 100));
    for (let n = 0; n < changed; n++) {
      const file = files[Math.floor(rand() * files.length)]!;
      const data = await readFile(file);
      const at = Math.floor(rand() * data.length);
      const line = Buffer.from(`edited ${new Date(1767225600000 + n * 1000).toISOString()} by bench\n`);
      await writeFile(file, Buffer.concat([data.subarray(0, at), line, data.subarray(at)]));
    }
    const second = await tar(join(scratch, 'second.tar'));
    return {
      name: 'tar twice, 1 % of files edited',
      what: `${files.length} files, ${changed} edited (a line inserted)`,
      streams: [first, second],
    };
  } finally {
    await rm(root, { recursive: true, force: true });
    await rm(join(scratch, 'first.tar'), { force: true });
    await rm(join(scratch, 'second.tar'), { force: true });
  }
}

/** Bytes of the per-block header of headerEveryBlock(): one disk sector, as many formats use. */
const HEADER = 512;

/**
 * A backup format that starts every tape block with its own header (backup id, job time, block
 * number, a CRC of the payload), as many commercial formats do: two full backups of the same
 * unchanged data, whose blocks differ only in their first 512 bytes.
 */
export function headerEveryBlock(bytes: number): Workload {
  const payloadPerBlock = TAPE_BLOCK - HEADER;
  const blocks = Math.ceil(bytes / TAPE_BLOCK);
  const data = backupLikeData(blocks * payloadPerBlock, 33);
  const backup = (id: number, startedAt: number) => {
    const out = Buffer.alloc(blocks * TAPE_BLOCK);
    for (let b = 0; b < blocks; b++) {
      const block = out.subarray(b * TAPE_BLOCK, (b + 1) * TAPE_BLOCK);
      const payload = data.subarray(b * payloadPerBlock, (b + 1) * payloadPerBlock);
      block.write('VTLBENCHBLK1', 0, 'latin1');
      block.writeUInt32LE(id, 16);
      block.writeBigUInt64LE(BigInt(startedAt + b * 3), 24);
      block.writeUInt32LE(b, 32);
      block.writeUInt32LE(crc32(payload), 36);
      payload.copy(block, HEADER);
    }
    return out;
  };
  return {
    name: 'header in every block',
    what: `${HEADER}-byte header per ${TAPE_BLOCK / 1024} KiB block, same data`,
    streams: [backup(1, 1767225600000), backup(2, 1767312000000)],
  };
}
