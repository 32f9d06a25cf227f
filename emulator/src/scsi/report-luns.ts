import { allocationLength, truncateToAllocation } from './cdb.js';
import { encodeLun } from './lun.js';
import { Sense, ScsiError } from './sense.js';

/**
 * REPORT LUNS parameter data (SPC-4 6.33) for the given LUNs. SELECT REPORT 00h/02h list them
 * all; 01h asks for well-known LUs, of which this target has none.
 */
export function reportLunsData(luns: Iterable<number>, cdb: Buffer): Buffer {
  const select = cdb[2]!;
  if (select > 0x02) throw new ScsiError(Sense.invalidFieldInCdb(2));
  const allocation = allocationLength(cdb, 6, 4);
  // SPC-4: an allocation length below 16 is an error, so initiators never get a torn header.
  if (allocation < 16) throw new ScsiError(Sense.invalidFieldInCdb(6));
  const list = select === 0x01 ? [] : [...luns].sort((a, b) => a - b);
  const out = Buffer.alloc(8 + 8 * list.length);
  out.writeUInt32BE(8 * list.length, 0);
  list.forEach((lun, i) => encodeLun(lun, out, 8 + 8 * i));
  return truncateToAllocation(out, allocation);
}
