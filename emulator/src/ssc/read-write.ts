import { giveBlockBuffer, takeBlockBuffer } from '../media/block-buffers.js';
import { readUInt24BE, requireZeroBits } from '../scsi/cdb.js';
import type { CommandContext } from '../scsi/dispatch.js';
import { checkCondition, good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import type { MountedTape, TapeDrive } from './tape-drive.js';
import { TapeSense } from './tape-sense.js';
import { blockToStore, readHostBlock } from './encrypted-io.js';
import { checkWriteProtection, protectionInfo, readProtectionMethod } from './protection.js';

const FIXED = 0x01;
const SILI = 0x02;

/** Data-out of WRITE(6): one block (variable) or count × the mode block length (fixed). */
export function write6DataOutLength(drive: TapeDrive, cdb: Buffer): number {
  const count = readUInt24BE(cdb, 2);
  return (cdb[1]! & FIXED) !== 0 ? count * drive.mode.blockLength : count;
}

/** READ(6) (SSC-4 6.4): a block in variable mode, `count` blocks in fixed mode. */
export async function read6(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xfc);
  const fixed = (cdb[1]! & FIXED) !== 0;
  const sili = (cdb[1]! & SILI) !== 0;
  // SSC: SILI with FIXED is contradictory; FIXED needs a block length to count in.
  if (fixed && sili) throw new ScsiError(Sense.invalidFieldInCdb(1, 1));
  if (fixed && drive.mode.blockLength === 0) throw new ScsiError(Sense.invalidFieldInCdb(1, 0));
  const count = readUInt24BE(cdb, 2);
  const m = drive.requireMounted();
  if (count === 0) return good();
  return fixed
    ? readFixed(drive, m, count, ctx.nexus, ctx.cmd.signal)
    : readVariable(drive, m, count, sili, ctx.nexus);
}

async function readVariable(
  drive: TapeDrive,
  m: MountedTape,
  length: number,
  sili: boolean,
  nexus: string,
): Promise<ScsiResult> {
  const r = await readProtected(drive, m, nexus, length);
  if (r.kind === 'eod') throw new ScsiError(TapeSense.endOfData(length));
  if (r.kind === 'filemark') throw new ScsiError(TapeSense.filemark(length));
  drive.noteIo('reading', 1, r.data.length);
  if (r.length === length) return good(r.data);
  const residue = length - r.length;
  // SSC-4 6.4: SILI hides an underlength block, and an overlength one in variable-block mode.
  if (sili && (residue > 0 || drive.mode.blockLength === 0)) return good(r.data);
  return checkCondition(TapeSense.incorrectLength(residue), r.data);
}

/**
 * A variable-block READ with protection on for reading (LBP_R) gets the block with its
 * protection information generated after it, 4 bytes longer than the data on the tape.
 */
async function readProtected(drive: TapeDrive, m: MountedTape, nexus: string, length: number) {
  const method = readProtectionMethod(drive);
  if (method === 0) return readHostBlock(drive, m, nexus, length);
  const r = await readHostBlock(drive, m, nexus, drive.personality.maxBlockLength);
  if (r.kind !== 'data') return r;
  const whole = Buffer.concat([r.data, protectionInfo(method, r.data)]);
  giveBlockBuffer(r.data);
  return { kind: 'data' as const, data: whole.subarray(0, length), length: whole.length };
}

async function readFixed(
  drive: TapeDrive,
  m: MountedTape,
  count: number,
  nexus: string,
  signal: AbortSignal | undefined,
): Promise<ScsiResult> {
  const blockLength = drive.mode.blockLength;
  const blocks: Buffer[] = [];
  // The blocks are copied into one transfer, so their pooled buffers go back at once.
  const gather = () => {
    const all = takeBlockBuffer(blocks.length * blockLength);
    blocks.forEach((b, i) => {
      b.copy(all, i * blockLength);
      giveBlockBuffer(b);
    });
    return all;
  };
  try {
    while (blocks.length < count && !signal?.aborted) {
      const r = await readHostBlock(drive, m, nexus, blockLength);
      const residue = count - blocks.length;
      if (r.kind === 'eod') return checkCondition(TapeSense.endOfData(residue), gather());
      if (r.kind === 'filemark') return checkCondition(TapeSense.filemark(residue), gather());
      // A block of another length ends the transfer; the tape is past it (SSC-4 6.4).
      if (r.length !== blockLength) {
        giveBlockBuffer(r.data);
        return checkCondition(TapeSense.incorrectLength(residue), gather());
      }
      blocks.push(r.data);
    }
    return good(gather());
  } finally {
    if (blocks.length > 0) drive.noteIo('reading', blocks.length, blocks.length * blockLength);
  }
}

/**
 * WRITE(6) (SSC-4 6.9): appends at the position. In buffered mode the command ends once its
 * blocks have their place on the tape (early warning and a full tape are known then) and
 * their bytes go on to the image from the drive's write buffer; unbuffered, once they are in
 * the image.
 */
export async function write6(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xfe);
  const fixed = (cdb[1]! & FIXED) !== 0;
  const count = readUInt24BE(cdb, 2);
  const blockLength = fixed ? drive.mode.blockLength : count;
  if (fixed && blockLength === 0) throw new ScsiError(Sense.invalidFieldInCdb(1, 0));
  if (!fixed && count > drive.personality.maxBlockLength) throw new ScsiError(Sense.invalidFieldInCdb(2));
  const m = drive.requireWritable();
  if (count === 0) return good();
  const blocks = fixed ? count : 1;
  const data = ctx.cmd.dataOut ?? Buffer.alloc(0);
  if (data.length < blocks * blockLength) throw new ScsiError(Sense.parameterListLengthError());
  const sentBlocks = checkWriteProtection(drive, data, blocks, blockLength, fixed);
  let earlyWarning = false;
  let written = 0;
  const onTheirWay: Promise<void>[] = [];
  try {
    for (; written < blocks; written++) {
      const sent = sentBlocks[written]!;
      const { data: block, opts } = await blockToStore(drive, m, ctx.nexus, sent);
      if (!drive.mode.buffered) {
        earlyWarning ||= (await m.tape.writeBlock(block, opts)).earlyWarning;
        continue;
      }
      const issued = await m.tape.issueBlock(block, opts);
      earlyWarning ||= issued.earlyWarning;
      onTheirWay.push(issued.written);
      await drive.writeBuffer.add(block.length, issued.written);
    }
  } catch (err) {
    // Blocks issued before the refusal still read the buffer; the transport may reuse it after.
    await Promise.allSettled(onTheirWay);
    // The residue counts what did not reach the tape: bytes in variable mode, blocks in fixed.
    drive.writeFailed(err, fixed ? blocks - written : count);
  } finally {
    if (written > 0) drive.noteIo('writing', written, written * blockLength);
  }
  const result = earlyWarning ? checkCondition(TapeSense.earlyWarning(0)) : good();
  return onTheirWay.length > 0 ? { ...result, dataOutInUse: Promise.allSettled(onTheirWay) } : result;
}

/** WRITE FILEMARKS(6): the durability point; buffered data and the marks are synced to disk. */
export async function writeFilemarks6(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb } = ctx;
  // WSMK: LTO has no setmarks.
  requireZeroBits(cdb, 1, 0xfe);
  const count = readUInt24BE(cdb, 2);
  // Zero filemarks only flushes, which SSC allows on a write-protected tape too.
  const m = count === 0 ? drive.requireMounted() : drive.requireWritable();
  let earlyWarning = false;
  try {
    if (count > 0) earlyWarning = (await m.tape.writeFilemarks(count)).earlyWarning;
    await m.tape.sync();
  } catch (err) {
    drive.writeFailed(err, count);
  }
  if (earlyWarning) throw new ScsiError(TapeSense.earlyWarning(0));
  return good();
}
