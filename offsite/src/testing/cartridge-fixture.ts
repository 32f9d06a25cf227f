import { randomBytes, randomFillSync } from 'node:crypto';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A piece of a test cartridge's data file: bytes at an offset; the rest are holes. */
export interface DataExtent {
  offset: number;
  bytes: Buffer;
}

/** Options of makeTestCartridge(). */
export interface TestCartridgeOptions {
  label: string;
  /** Logical size of `data`; everything not covered by `extents` stays a hole. */
  dataBytes: number;
  extents?: DataExtent[];
  stub?: boolean;
}

/**
 * Writes a cartridge image directory as the emulator lays it out (meta.json, mam.json, index,
 * data) with a sparse data file: for tests and benchmarks of the transfer engine.
 */
export async function makeTestCartridge(dir: string, opts: TestCartridgeOptions): Promise<string> {
  await mkdir(dir, { recursive: true });
  const meta = {
    format: 1,
    label: opts.label,
    generation: 8,
    density: 0x5e,
    capacity_bytes: 12_000_000_000_000,
    write_protected: false,
    stub: opts.stub ?? false,
    created: '2026-01-01T00:00:00Z',
  };
  await writeFile(join(dir, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
  await writeFile(join(dir, 'mam.json'), `${JSON.stringify({ barcode: opts.label, loads: 3 })}\n`);
  if (opts.stub) return dir;
  await writeFile(join(dir, 'index'), randomBytes(32 + 24 * 100));
  const data = await open(join(dir, 'data'), 'w');
  try {
    for (const e of opts.extents ?? []) await data.write(e.bytes, 0, e.bytes.length, e.offset);
    await data.truncate(opts.dataBytes);
  } finally {
    await data.close();
  }
  return dir;
}

/**
 * Backup-like bytes: text-like records (compress well), random blocks (do not compress) and
 * repeated patterns, mixed in a fixed proportion (the layout follows the seed; random blocks
 * are fresh each call). `mix` keeps one kind only: `text` or `random`.
 */
export function backupLikeData(
  bytes: number,
  seed = 1,
  mix: 'backup' | 'text' | 'random' = 'backup',
): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  let state = seed >>> 0 || 1;
  const rand = () => {
    // xorshift32: fast and reproducible, enough for test data.
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
  const words = [
    'backup',
    'invoice',
    'customer',
    'ledger',
    'record',
    'status=ok',
    'amount',
    'region',
    'EUR',
    '2026-01-',
  ];
  const pattern = Buffer.from('0123456789abcdef'.repeat(256));
  let at = 0;
  while (at < bytes) {
    const kind = mix === 'text' ? 0 : mix === 'random' ? 5 : rand() % 10;
    const len = Math.min(bytes - at, 64 * 1024);
    if (kind < 5) {
      // Text records.
      let text = '';
      while (text.length < len)
        text += `${rand() % 100000};${words[rand() % words.length]};${rand() % 1000}.${rand() % 100}\n`;
      out.write(text.slice(0, len), at, 'latin1');
    } else if (kind < 8) {
      // Incompressible: encrypted or already-compressed files in the backup.
      randomFillSync(out, at, len);
    } else {
      pattern.copy(out, at, 0, len);
    }
    at += len;
  }
  return out;
}
