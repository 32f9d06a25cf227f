import { command } from './processes.js';

/**
 * A file's extents as `filefrag -v` lists them, without where they lie on disk: logical start
 * and length in 4 KiB blocks and whether btrfs compressed the extent ("encoded"). Two cartridges
 * written with the same stream should have the same shape, or a dedup pass cannot share whole
 * extents (docs/storage.md, "Alignment").
 */
export async function extentShape(file: string): Promise<string[]> {
  const out = await command('filefrag', ['-v', file]);
  const shape: string[] = [];
  // "   0:        0..      31:    3751046..   3751077:     32:             encoded,last,eof"
  for (const line of out.split('\n')) {
    const m = /^\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+\d+\.\.\s*\d+:\s+\d+:.*?(\S*)$/.exec(line);
    if (!m) continue;
    shape.push(`${m[1]}-${m[2]}${m[3]!.split(',').includes('encoded') ? ' encoded' : ''}`);
  }
  return shape;
}

/** How two files' extents compare: counts, extents of either missing from the other, uncompressed ones. */
export function compareShapes(a: string[], b: string[]): string {
  const inB = new Set(b);
  const inA = new Set(a);
  const differ = a.filter((e) => !inB.has(e)).length + b.filter((e) => !inA.has(e)).length;
  const plain = [...a, ...b].filter((e) => !e.endsWith(' encoded')).length;
  return `${a.length} and ${b.length} extents, ${differ} differing, ${plain} not compressed`;
}
