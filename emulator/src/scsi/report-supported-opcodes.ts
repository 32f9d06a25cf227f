import { allocationLength, truncateToAllocation } from './cdb.js';
import { type ListedEntry, type OpcodeEntry, type OpcodeTable, lengthOf } from './dispatch.js';
import { Sense, ScsiError } from './sense.js';

const SUPPORTED = 0b011;
const NOT_SUPPORTED = 0b001;

/**
 * REPORT SUPPORTED OPERATION CODES (SPC-4 6.35), built from the device's dispatch table so the
 * answer never drifts from what the device really executes.
 */
export function reportSupportedOperationCodes(table: OpcodeTable, cdb: Buffer): Buffer {
  const rctd = (cdb[2]! & 0x80) !== 0;
  const options = cdb[2]! & 0x07;
  const opcode = cdb[3]!;
  const serviceAction = cdb.readUInt16BE(4);
  const allocation = allocationLength(cdb, 6, 4);
  let data: Buffer;
  switch (options) {
    case 0:
      data = allCommands(table.list(), rctd);
      break;
    case 1:
      if (table.hasServiceActions(opcode)) throw new ScsiError(Sense.invalidFieldInCdb(2, 2));
      data = oneCommand(opcode, table.lookup(opcode), rctd);
      break;
    case 2:
      if (!table.hasServiceActions(opcode)) throw new ScsiError(Sense.invalidFieldInCdb(2, 2));
      data = oneCommand(opcode, table.lookup(opcode, serviceAction), rctd);
      break;
    case 3: {
      const sa = table.hasServiceActions(opcode) ? serviceAction : undefined;
      data = oneCommand(opcode, table.lookup(opcode, sa), rctd);
      break;
    }
    default:
      throw new ScsiError(Sense.invalidFieldInCdb(2, 2));
  }
  return truncateToAllocation(data, allocation);
}

function allCommands(rows: ListedEntry[], rctd: boolean): Buffer {
  const size = rctd ? 20 : 8;
  const out = Buffer.alloc(4 + rows.length * size);
  out.writeUInt32BE(rows.length * size, 0);
  rows.forEach((row, i) => {
    const at = 4 + i * size;
    out[at] = row.opcode;
    out.writeUInt16BE(row.serviceAction ?? 0, at + 2);
    out[at + 5] = (rctd ? 0x02 : 0) | (row.serviceAction !== undefined ? 0x01 : 0);
    out.writeUInt16BE(row.cdbLength, at + 6);
    if (rctd) timeoutsDescriptor(row.entry).copy(out, at + 8);
  });
  return out;
}

function oneCommand(opcode: number, entry: OpcodeEntry | undefined, rctd: boolean): Buffer {
  if (!entry) {
    const out = Buffer.alloc(4);
    out[1] = NOT_SUPPORTED;
    return out;
  }
  const length = lengthOf(opcode, entry);
  const usage = Buffer.alloc(length, 0xff);
  if (entry.usage) Buffer.from(entry.usage.slice(0, length)).copy(usage);
  usage[0] = opcode;
  const head = Buffer.alloc(4);
  head[1] = (rctd ? 0x80 : 0) | SUPPORTED;
  head.writeUInt16BE(length, 2);
  return Buffer.concat(rctd ? [head, usage, timeoutsDescriptor(entry)] : [head, usage]);
}

function timeoutsDescriptor(entry: OpcodeEntry): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt16BE(10, 0);
  out.writeUInt32BE(entry.timeouts?.nominal ?? 0, 4);
  out.writeUInt32BE(entry.timeouts?.recommended ?? 0, 8);
  return out;
}
