/**
 * The LUN table every initiator sees (spec §2.2: one changer LUN plus one LUN per drive, per
 * library, identical on every port). The emulator numbers its SCSI devices by it and the
 * nodeagent's LIO backstores follow it, so an FC host and an iSCSI host see a library's devices
 * under the same LUN numbers; this is the one definition both import.
 *
 * Libraries are taken in ascending id; each takes a consecutive block: its changer first, then
 * its drives in element address order. So LUN 0 is always the changer of the lowest-numbered
 * library (hosts scan from LUN 0, and Linux falls back to a sequential scan that stops at the
 * first hole), and a library's block only moves when a library with a lower id is added or
 * deleted, which the spec makes a restart anyway. Backup software pairs drives with changer
 * elements by serial (DVCID), not by LUN.
 */

/** One row of the LUN order: which device of which library a LUN is. */
export interface LunSlot {
  lun: number;
  library: number;
  kind: 'changer' | 'drive';
  /** Drive index (0-based, element address order) for drive LUNs. */
  drive?: number;
}

/** A library as the LUN order needs it: its id and its drives' indexes. */
export interface LunLibrary {
  id: number;
  drives: readonly number[];
}

/** The LUN of every device of these libraries. */
export function lunOrder(libraries: readonly LunLibrary[]): LunSlot[] {
  const out: LunSlot[] = [];
  let next = 0;
  for (const lib of [...libraries].sort((a, b) => a.id - b.id)) {
    out.push({ lun: next++, library: lib.id, kind: 'changer' });
    for (const drive of [...lib.drives].sort((a, b) => a - b)) {
      out.push({ lun: next++, library: lib.id, kind: 'drive', drive });
    }
  }
  return out;
}
