import { giveBlockBuffer } from '../media/block-buffers.js';
import { readUInt24BE } from '../scsi/cdb.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import type { TapeDrive } from './tape-drive.js';
import { TapeSense } from './tape-sense.js';

const FIXED = 0x01;
const BYTCMP = 0x02;
const IMMED = 0x04;
const VBF = 0x08;

/**
 * VERIFY(6) (SSC-4 6.11): reads blocks from the position without transferring them, each
 * checked against the checksum stored with it, so a host learns that what it wrote reads back.
 * With VBF the count is of filemarks: everything up to and past the count-th is verified (a
 * whole backup file); otherwise blocks (fixed mode) or one block (variable mode). A block that
 * fails its checksum is MEDIUM ERROR as on READ; end of data first is BLANK CHECK with the count
 * not done. Comparing with host data (BYTCMP) is not offered.
 */
export async function verify6(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  const flags = cdb[1]!;
  if ((flags & 0xc0) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(1, 6));
  if ((flags & BYTCMP) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(1, 1));
  if ((flags & IMMED) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(1, 2));
  const byFilemarks = (flags & VBF) !== 0;
  const fixed = (flags & FIXED) !== 0;
  if (byFilemarks && fixed) throw new ScsiError(Sense.invalidFieldInCdb(1, 0));
  if (fixed && drive.mode.blockLength === 0) throw new ScsiError(Sense.invalidFieldInCdb(1, 0));
  const count = readUInt24BE(cdb, 2);
  const m = drive.requireMounted();
  if (count === 0) return good();
  const wanted = byFilemarks ? count : fixed ? count : 1;
  let done = 0;
  let bytes = 0;
  let blocks = 0;
  try {
    while (done < wanted) {
      const r = await m.tape.readBlock(drive.personality.maxBlockLength);
      if (r.kind === 'eod') throw new ScsiError(TapeSense.endOfData(wanted - done));
      if (r.kind === 'filemark') {
        if (byFilemarks) done += 1;
        else throw new ScsiError(TapeSense.filemark(wanted - done));
        continue;
      }
      bytes += r.length;
      blocks += 1;
      giveBlockBuffer(r.data);
      if (!byFilemarks) done += 1;
    }
  } catch (err) {
    if (err instanceof ScsiError) throw err;
    drive.readFailed(err);
  } finally {
    if (blocks > 0) drive.noteIo('reading', blocks, bytes);
  }
  return good();
}
