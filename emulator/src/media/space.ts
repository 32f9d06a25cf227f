import { MediaError } from './errors.js';
import type { IndexFile } from './index-file.js';

/** Where a SPACE stopped and how far it got; the drive derives sense and residue from it. */
export interface SpaceResult {
  /** Units (blocks or filemarks) actually spaced over; residue = |n| - done. */
  done: number;
  /** `none`: all n done. `filemark`: FILEMARK condition. `eod`: BLANK CHECK. `bop`: EOM at BOP. */
  stop: 'none' | 'filemark' | 'eod' | 'bop';
}

/** The tape as a SPACE sees it: the index and the current position. */
export interface TapeView {
  index: IndexFile;
  pos: number;
  /** Filemarks before `pos`. */
  posFilemarks: number;
  /** Filemarks on the whole tape. */
  filemarks: number;
}

export interface SpaceOutcome {
  result: SpaceResult;
  to: { pos: number; posFilemarks: number };
}

const outcome = (
  done: number,
  stop: SpaceResult['stop'],
  pos: number,
  posFilemarks: number,
): SpaceOutcome => ({
  result: { done, stop },
  to: { pos, posFilemarks },
});

/** Filemarks before object `object` (the cumulative count the index keeps per entry). */
async function filemarksBefore(t: TapeView, object: number): Promise<number> {
  return object >= t.index.count ? t.filemarks : (await t.index.get(object)).filemarksBefore;
}

/**
 * SPACE blocks, SSC semantics: forward, a filemark stops the move on its far (EOP) side;
 * backward, on its near (BOP) side. Filemark positions come from the index's cumulative
 * filemark counts, so spacing over a million blocks costs a few index reads, not a scan.
 */
export async function spaceBlocks(t: TapeView, n: number): Promise<SpaceOutcome> {
  const count = t.index.count;
  if (n === 0) return outcome(0, 'none', t.pos, t.posFilemarks);
  if (n > 0) {
    const target = t.pos + n;
    // No filemark between here and the target: one comparison of cumulative counts says so.
    if (target <= count && (await filemarksBefore(t, target)) === t.posFilemarks) {
      return outcome(n, 'none', target, t.posFilemarks);
    }
    const fm = t.posFilemarks < t.filemarks ? await t.index.findFilemark(t.posFilemarks, t.pos) : undefined;
    if (fm !== undefined && fm < target) return outcome(fm - t.pos, 'filemark', fm + 1, t.posFilemarks + 1);
    return outcome(count - t.pos, 'eod', count, t.filemarks);
  }
  const k = -n;
  const target = t.pos - k;
  const lastFm = t.posFilemarks > 0 ? await t.index.findFilemark(t.posFilemarks - 1) : undefined;
  if (lastFm !== undefined && lastFm >= Math.max(target, 0)) {
    return outcome(t.pos - 1 - lastFm, 'filemark', lastFm, t.posFilemarks - 1);
  }
  if (target < 0) return outcome(t.pos, 'bop', 0, 0);
  return outcome(k, 'none', target, t.posFilemarks);
}

/** SPACE filemarks: forward ends past the n-th filemark; backward on the BOP side of it. */
export async function spaceFilemarks(t: TapeView, n: number): Promise<SpaceOutcome> {
  if (n === 0) return outcome(0, 'none', t.pos, t.posFilemarks);
  if (n > 0) {
    const m = t.posFilemarks + n - 1;
    const fm = m < t.filemarks ? await t.index.findFilemark(m, t.pos) : undefined;
    if (fm !== undefined) return outcome(n, 'none', fm + 1, m + 1);
    return outcome(t.filemarks - t.posFilemarks, 'eod', t.index.count, t.filemarks);
  }
  const m = t.posFilemarks + n;
  if (m < 0) return outcome(t.posFilemarks, 'bop', 0, 0);
  const fm = await t.index.findFilemark(m);
  if (fm === undefined) throw new MediaError('corrupt', `the block index lost filemark ${m}`);
  return outcome(-n, 'none', fm, m);
}
