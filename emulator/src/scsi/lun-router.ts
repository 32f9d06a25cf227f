import { ScsiStatus, Opcode } from './constants.js';
import { absentLunInquiry } from './inquiry.js';
import { reportLunsData } from './report-luns.js';
import { checkCondition, good } from './result.js';
import { buildSense, Sense, ScsiError } from './sense.js';
import { truncateToAllocation } from './cdb.js';
import type { LunMap, ScsiCommand, ScsiResult } from './types.js';

/**
 * Target-level routing shared by every transport: REPORT LUNS from the initiator's LUN map, and
 * the SPC answers for a LUN that is not mapped (INQUIRY qualifier 011b, LOGICAL UNIT NOT
 * SUPPORTED for everything else).
 */
export async function executeRouted(luns: LunMap, cmd: ScsiCommand): Promise<ScsiResult> {
  const opcode = cmd.cdb[0];
  if (opcode === Opcode.REPORT_LUNS) {
    try {
      return good(reportLunsData(luns.keys(), cmd.cdb));
    } catch (err) {
      if (err instanceof ScsiError && err.sense) return checkCondition(err.sense);
      throw err;
    }
  }
  const device = luns.get(cmd.lun);
  if (device) return device.execute(cmd);
  if (opcode === Opcode.INQUIRY && (cmd.cdb[1]! & 0x01) === 0) {
    return good(truncateToAllocation(absentLunInquiry(), cmd.cdb.readUInt16BE(3)));
  }
  if (opcode === Opcode.REQUEST_SENSE) {
    return {
      status: ScsiStatus.GOOD,
      dataIn: truncateToAllocation(buildSense(Sense.lunNotSupported()), cmd.cdb[4]!),
    };
  }
  return checkCondition(Sense.lunNotSupported());
}

/** Data-out length for a routed CDB: unmapped LUNs take none. */
export function routedDataOutLength(luns: LunMap, lun: number, cdb: Buffer): number {
  if (cdb[0] === Opcode.REPORT_LUNS) return 0;
  return luns.get(lun)?.dataOutLength(cdb) ?? 0;
}
