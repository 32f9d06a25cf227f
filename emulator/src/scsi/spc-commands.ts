import { allocationLength, requireZeroBits, truncateToAllocation } from './cdb.js';
import { MaintenanceIn, Opcode } from './constants.js';
import type { CommandContext, OpcodeEntry, OpcodeTable } from './dispatch.js';
import {
  type DeviceIdentity,
  deviceIdentificationPayload,
  standardInquiry,
  unitSerialNumberPayload,
  vpdPage,
} from './inquiry.js';
import { reportSupportedOperationCodes } from './report-supported-opcodes.js';
import type { PersistentReservations } from './persistent-reservations.js';
import type { Reservation } from './reservation.js';
import { buildSense, Sense, ScsiError } from './sense.js';
import { good, reservationConflict } from './result.js';
import type { ScsiResult } from './types.js';
import type { UnitAttentions } from './unit-attention.js';

/** A VPD page builder: returns the payload after the 4-byte page header. */
export type VpdPageBuilder = (ctx: CommandContext) => Buffer;

/** The device state the SPC handlers read and change. */
export interface SpcHost {
  readonly peripheralType: number;
  readonly identity: DeviceIdentity;
  readonly table: OpcodeTable;
  readonly unitAttentions: UnitAttentions;
  readonly reservation: Reservation;
  readonly persistentReservations: PersistentReservations;
  readonly vpdPages: Map<number, VpdPageBuilder>;
  /** The sense of the last CHECK CONDITION on this nexus, cleared when read. */
  takePendingSense(nexus: string): Buffer | undefined;
  /** REQUEST SENSE when nothing is pending: NO SENSE, or a device's status (tape position). */
  idleSense(ctx: CommandContext): Buffer;
  /** TEST UNIT READY: resolves when ready, throws ScsiError (NOT READY ...) otherwise. */
  testUnitReady(ctx: CommandContext): void | Promise<void>;
}

/** The VPD pages every device has; personalities add theirs to `vpdPages`. */
export function defaultVpdPages(host: Pick<SpcHost, 'identity'>): Map<number, VpdPageBuilder> {
  return new Map<number, VpdPageBuilder>([
    [0x80, () => unitSerialNumberPayload(host.identity)],
    [0x83, () => deviceIdentificationPayload(host.identity)],
  ]);
}

function inquiry(host: SpcHost, ctx: CommandContext): ScsiResult {
  const { cdb } = ctx;
  requireZeroBits(cdb, 1, 0xfe);
  const allocation = allocationLength(cdb, 3, 2);
  if ((cdb[1]! & 0x01) === 0) {
    if (cdb[2] !== 0) throw new ScsiError(Sense.invalidFieldInCdb(2, 7));
    return good(truncateToAllocation(standardInquiry(host.peripheralType, host.identity), allocation));
  }
  const page = cdb[2]!;
  let payload: Buffer;
  if (page === 0x00) {
    payload = Buffer.from([0x00, ...[...host.vpdPages.keys()].sort((a, b) => a - b)]);
  } else {
    const builder = host.vpdPages.get(page);
    if (!builder) throw new ScsiError(Sense.invalidFieldInCdb(2, 7));
    payload = builder(ctx);
  }
  return good(truncateToAllocation(vpdPage(host.peripheralType, page, payload), allocation));
}

function requestSense(host: SpcHost, ctx: CommandContext): ScsiResult {
  const { cdb, nexus } = ctx;
  // Descriptor-format sense is not implemented; SPC-4 says refuse DESC=1 in that case.
  requireZeroBits(cdb, 1, 0xff);
  const allocation = cdb[4]!;
  const pending = host.takePendingSense(nexus);
  if (pending) return good(truncateToAllocation(pending, allocation));
  const ua = host.unitAttentions.take(nexus);
  if (ua) return good(truncateToAllocation(buildSense(Sense.unitAttention(ua)), allocation));
  return good(truncateToAllocation(host.idleSense(ctx), allocation));
}

/**
 * While persistent reservations are in use, RESERVE/RELEASE(6/10) are GOOD without effect for
 * a holder and conflict for everyone else (SPC-4 5.13.3: what REPORT CAPABILITIES' CRH says).
 */
function underPersistentReservations(host: SpcHost, ctx: CommandContext): ScsiResult | undefined {
  const pr = host.persistentReservations;
  if (!pr.active) return undefined;
  return pr.legacyCommandIsNoOp(ctx.nexus) ? good() : reservationConflict();
}

function reserve(host: SpcHost, ctx: CommandContext): ScsiResult {
  // Third-party and extent reservations are obsolete; only plain LU reservations exist here.
  requireZeroBits(ctx.cdb, 1, ctx.cdb[0] === Opcode.RESERVE_10 ? 0x13 : 0x1f);
  const persistent = underPersistentReservations(host, ctx);
  if (persistent) return persistent;
  return host.reservation.reserve(ctx.nexus) ? good() : reservationConflict();
}

function release(host: SpcHost, ctx: CommandContext): ScsiResult {
  requireZeroBits(ctx.cdb, 1, ctx.cdb[0] === Opcode.RELEASE_10 ? 0x13 : 0x1f);
  const persistent = underPersistentReservations(host, ctx);
  if (persistent) return persistent;
  host.reservation.release(ctx.nexus);
  return good();
}

/** Installs the SPC commands every device type answers. */
export function installSpcCommands(host: SpcHost): void {
  const rows: Array<[number, OpcodeEntry]> = [
    [
      Opcode.TEST_UNIT_READY,
      {
        name: 'TEST UNIT READY',
        handler: async (ctx) => {
          await host.testUnitReady(ctx);
          return good();
        },
        readOnly: true,
      },
    ],
    [
      Opcode.REQUEST_SENSE,
      {
        name: 'REQUEST SENSE',
        handler: (ctx) => requestSense(host, ctx),
        uaExempt: true,
        allowedWhenReserved: true,
        concurrent: true,
      },
    ],
    [
      Opcode.INQUIRY,
      {
        name: 'INQUIRY',
        handler: (ctx) => inquiry(host, ctx),
        uaExempt: true,
        allowedWhenReserved: true,
        concurrent: true,
        usage: [0x12, 0x01, 0xff, 0xff, 0xff, 0x00],
      },
    ],
    [
      Opcode.RESERVE_6,
      { name: 'RESERVE(6)', handler: (ctx) => reserve(host, ctx), checksPersistentReservations: true },
    ],
    [
      Opcode.RELEASE_6,
      {
        name: 'RELEASE(6)',
        handler: (ctx) => release(host, ctx),
        allowedWhenReserved: true,
        checksPersistentReservations: true,
      },
    ],
    [
      Opcode.RESERVE_10,
      { name: 'RESERVE(10)', handler: (ctx) => reserve(host, ctx), checksPersistentReservations: true },
    ],
    [
      Opcode.RELEASE_10,
      {
        name: 'RELEASE(10)',
        handler: (ctx) => release(host, ctx),
        allowedWhenReserved: true,
        checksPersistentReservations: true,
      },
    ],
  ];
  for (const [opcode, entry] of rows) host.table.set(opcode, entry);
  host.table.setServiceAction(Opcode.MAINTENANCE_IN, MaintenanceIn.REPORT_SUPPORTED_OPERATION_CODES, {
    name: 'REPORT SUPPORTED OPERATION CODES',
    handler: (ctx) => good(reportSupportedOperationCodes(host.table, ctx.cdb)),
    allowedWhenReserved: true,
    concurrent: true,
  });
}
