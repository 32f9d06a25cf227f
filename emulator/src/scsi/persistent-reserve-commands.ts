import { truncateToAllocation } from './cdb.js';
import { Opcode } from './constants.js';
import type { CommandContext, OpcodeTable } from './dispatch.js';
import {
  isAllRegistrantsType,
  type PersistentReservations,
  type PrNotice,
  SUPPORTED_PR_TYPES,
} from './persistent-reservations.js';
import { good } from './result.js';
import { Sense, ScsiError } from './sense.js';
import type { ScsiResult } from './types.js';
import type { UnitAttentions } from './unit-attention.js';

/** PERSISTENT RESERVE IN service actions (SPC-4 6.15.1). */
export const PrIn = {
  READ_KEYS: 0,
  READ_RESERVATION: 1,
  REPORT_CAPABILITIES: 2,
  READ_FULL_STATUS: 3,
} as const;
/** PERSISTENT RESERVE OUT service actions (SPC-4 6.16.2); REGISTER AND MOVE is not offered. */
export const PrOut = {
  REGISTER: 0,
  RESERVE: 1,
  RELEASE: 2,
  CLEAR: 3,
  PREEMPT: 4,
  PREEMPT_AND_ABORT: 5,
  REGISTER_AND_IGNORE_EXISTING_KEY: 6,
} as const;

/** The basic PERSISTENT RESERVE OUT parameter list; SPEC_I_PT (which makes it longer) is not offered. */
const PARAMETER_LIST_LENGTH = 24;
/** iSCSI protocol identifier with TransportID format 01b: the initiator port name (SPC-4 7.6.4.6). */
const ISCSI_PORT_TRANSPORT_ID = 0x45;

export interface PrHost {
  readonly persistentReservations: PersistentReservations;
  readonly unitAttentions: UnitAttentions;
}

/** The header every PERSISTENT RESERVE IN answer but REPORT CAPABILITIES starts with. */
function withGeneration(pr: PersistentReservations, body: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(pr.generation >>> 0, 0);
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

function readKeys(pr: PersistentReservations): Buffer {
  const body = Buffer.alloc(8 * pr.registrations().size);
  let at = 0;
  for (const key of pr.registrations().values()) at = body.writeBigUInt64BE(key, at);
  return withGeneration(pr, body);
}

/** The holder's key (zero for all-registrants types), scope LU (0) and type. */
function readReservation(pr: PersistentReservations): Buffer {
  const r = pr.reservation;
  if (!r) return withGeneration(pr, Buffer.alloc(0));
  const body = Buffer.alloc(16);
  if (!isAllRegistrantsType(r.type)) body.writeBigUInt64BE(pr.registrations().get(r.holder) ?? 0n, 0);
  body[13] = r.type & 0x0f;
  return withGeneration(pr, body);
}

/**
 * REPORT CAPABILITIES: CRH 1 (RESERVE/RELEASE follow SPC-4 5.13.3), no SPEC_I_PT, ALL_TG_PT or
 * APTPL; the type mask is valid and lists all six types.
 */
function reportCapabilities(): Buffer {
  const out = Buffer.alloc(8);
  out.writeUInt16BE(8, 0);
  out[2] = 0x10; // CRH
  out[3] = 0x80; // TMV
  let mask = 0;
  for (const type of SUPPORTED_PR_TYPES) mask |= MASK_BIT[type] ?? 0;
  out.writeUInt16BE(mask, 4);
  return out;
}
/** Type → bit of the persistent reservation type mask (bytes 4-5). */
const MASK_BIT: Record<number, number> = { 7: 0x8000, 6: 0x4000, 5: 0x2000, 3: 0x0800, 1: 0x0200, 8: 0x0001 };

/** An iSCSI TransportID: the initiator port name, NUL-terminated and padded to 4 bytes. */
function iscsiTransportId(nexus: string): Buffer {
  const nameLength = Math.ceil((Buffer.byteLength(nexus) + 1) / 4) * 4;
  const out = Buffer.alloc(4 + nameLength);
  out[0] = ISCSI_PORT_TRANSPORT_ID;
  out.writeUInt16BE(nameLength, 2);
  out.write(nexus, 4);
  return out;
}

function readFullStatus(pr: PersistentReservations): Buffer {
  const descriptors: Buffer[] = [];
  for (const [nexus, key] of pr.registrations()) {
    const transportId = iscsiTransportId(nexus);
    const d = Buffer.alloc(24);
    d.writeBigUInt64BE(key, 0);
    if (pr.isHolder(nexus)) {
      d[12] = 0x01; // R_HOLDER
      d[13] = pr.reservation!.type & 0x0f;
    }
    d.writeUInt16BE(1, 18); // relative target port identifier: the one portal group
    d.writeUInt32BE(transportId.length, 20);
    descriptors.push(d, transportId);
  }
  return withGeneration(pr, Buffer.concat(descriptors));
}

function persistentReserveIn(host: PrHost, ctx: CommandContext): ScsiResult {
  const { cdb } = ctx;
  const allocation = cdb.readUInt16BE(7);
  const pr = host.persistentReservations;
  switch (cdb[1]! & 0x1f) {
    case PrIn.READ_KEYS:
      return good(truncateToAllocation(readKeys(pr), allocation));
    case PrIn.READ_RESERVATION:
      return good(truncateToAllocation(readReservation(pr), allocation));
    case PrIn.REPORT_CAPABILITIES:
      return good(truncateToAllocation(reportCapabilities(), allocation));
    default:
      return good(truncateToAllocation(readFullStatus(pr), allocation));
  }
}

function persistentReserveOut(host: PrHost, ctx: CommandContext): ScsiResult {
  const { cdb, nexus } = ctx;
  const action = cdb[1]! & 0x1f;
  const scope = cdb[2]! >> 4;
  const type = cdb[2]! & 0x0f;
  if (cdb.readUInt32BE(5) !== PARAMETER_LIST_LENGTH) throw new ScsiError(Sense.parameterListLengthError());
  const data = ctx.cmd.dataOut ?? Buffer.alloc(0);
  if (data.length < PARAMETER_LIST_LENGTH) throw new ScsiError(Sense.parameterListLengthError());
  const key = data.readBigUInt64BE(0);
  const serviceActionKey = data.readBigUInt64BE(8);
  const flags = data[20]!;
  // SPEC_I_PT (bit 3) and ALL_TG_PT (bit 2) are not offered; APTPL (bit 0) neither: no power-loss
  // persistence. Each is refused where it is set, as REPORT CAPABILITIES says.
  for (const bit of [3, 2, 0])
    if (flags & (1 << bit)) throw new ScsiError(Sense.invalidFieldInParameterList(20, bit));
  const pr = host.persistentReservations;
  const needsType =
    action === PrOut.RESERVE ||
    action === PrOut.RELEASE ||
    action === PrOut.PREEMPT ||
    action === PrOut.PREEMPT_AND_ABORT;
  if (needsType) {
    if (scope !== 0) throw new ScsiError(Sense.invalidFieldInCdb(2, 7));
    if (!SUPPORTED_PR_TYPES.includes(type)) throw new ScsiError(Sense.invalidFieldInCdb(2, 3));
  }
  let notices: PrNotice[] = [];
  switch (action) {
    case PrOut.REGISTER:
    case PrOut.REGISTER_AND_IGNORE_EXISTING_KEY:
      notices = pr.register(nexus, key, serviceActionKey, action === PrOut.REGISTER_AND_IGNORE_EXISTING_KEY);
      break;
    case PrOut.RESERVE:
      pr.reserve(nexus, key, type);
      break;
    case PrOut.RELEASE:
      notices = pr.release(nexus, key, type);
      break;
    case PrOut.CLEAR:
      notices = pr.clear(nexus, key);
      break;
    default:
      // PREEMPT AND ABORT: the device runs one command at a time, so a preempted host has no
      // task in progress here to abort; what it sends next meets the new reservation.
      notices = pr.preempt(nexus, key, serviceActionKey, type);
  }
  for (const n of notices) host.unitAttentions.raise(n.asc, { only: n.nexus });
  return good();
}

/**
 * PERSISTENT RESERVE IN/OUT rows. They run under any persistent reservation (their own rules
 * decide) but conflict while another host holds a RESERVE(6/10) reservation.
 */
export function installPersistentReserveCommands(host: PrHost, table: OpcodeTable): void {
  const pin = {
    handler: (ctx: CommandContext) => persistentReserveIn(host, ctx),
    checksPersistentReservations: true,
  };
  for (const [name, action] of Object.entries(PrIn))
    table.setServiceAction(Opcode.PERSISTENT_RESERVE_IN, action, {
      name: `PERSISTENT RESERVE IN (${name.replaceAll('_', ' ')})`,
      ...pin,
    });
  const pout = {
    handler: (ctx: CommandContext) => persistentReserveOut(host, ctx),
    dataOutLength: (cdb: Buffer) => Math.min(cdb.readUInt32BE(5), 256),
    checksPersistentReservations: true,
  };
  for (const [name, action] of Object.entries(PrOut))
    table.setServiceAction(Opcode.PERSISTENT_RESERVE_OUT, action, {
      name: `PERSISTENT RESERVE OUT (${name.replaceAll('_', ' ')})`,
      ...pout,
    });
}
