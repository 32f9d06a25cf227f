import { cdbLengthForOpcode } from './cdb.js';
import type { ScsiCommand, ScsiResult } from './types.js';

/** What a handler gets: the command plus the nexus id it arrived on. */
export interface CommandContext {
  cmd: ScsiCommand;
  cdb: Buffer;
  nexus: string;
}

export type CommandHandler = (ctx: CommandContext) => ScsiResult | Promise<ScsiResult>;

/** One row of a device's opcode table (mhvtl's `struct device_type_template` entries). */
export interface OpcodeEntry {
  name: string;
  handler: CommandHandler;
  /** Defaults to the length of the opcode's group. */
  cdbLength?: number;
  /** Data-out bytes this CDB transfers; absent means none. */
  dataOutLength?: (cdb: Buffer) => number;
  /** Runs even while a unit attention is pending (INQUIRY, REPORT LUNS, REQUEST SENSE). */
  uaExempt?: boolean;
  /**
   * Runs while another nexus holds a RESERVE(6/10) reservation, and under any persistent
   * reservation (INQUIRY, REQUEST SENSE, REPORT LUNS, LOG SENSE, ...); a function decides per
   * CDB (PREVENT ALLOW MEDIUM REMOVAL may always allow, never prevent).
   */
  allowedWhenReserved?: boolean | ((cdb: Buffer) => boolean);
  /**
   * Transfers nothing to the medium and changes no setting (READ, positioning, sensing): runs
   * under a Write Exclusive persistent reservation that another nexus holds.
   */
  readOnly?: boolean;
  /** Applies the persistent reservation rules itself (PERSISTENT RESERVE IN/OUT, RESERVE/RELEASE). */
  checksPersistentReservations?: boolean;
  /** Bypasses the device's serial queue; only for handlers that touch no media state. */
  concurrent?: boolean;
  /** CDB usage bitmap for REPORT SUPPORTED OPERATION CODES; defaults to all bits of each byte. */
  usage?: readonly number[];
  /** Nominal and recommended timeouts in seconds, reported when RCTD is set (backup apps use them). */
  timeouts?: { nominal: number; recommended: number };
}

/** Where the service action sits: byte 1 bits 4-0, except the variable-length opcode 0x7F. */
export function serviceActionOf(cdb: Buffer): number {
  return cdb[0] === 0x7f ? cdb.readUInt16BE(8) : (cdb[1] ?? 0) & 0x1f;
}

export type Resolution =
  | { kind: 'found'; entry: OpcodeEntry; serviceAction?: number }
  | { kind: 'invalid-opcode' }
  | { kind: 'invalid-service-action' };

/** A listed row: what REPORT SUPPORTED OPERATION CODES walks. */
export interface ListedEntry {
  opcode: number;
  serviceAction?: number;
  entry: OpcodeEntry;
  cdbLength: number;
}

/**
 * Opcode → handler table with per-opcode service-action subtables. Anything not in the table is
 * INVALID COMMAND OPERATION CODE; personalities copy a base table and override rows.
 */
export class OpcodeTable {
  private readonly plain = new Map<number, OpcodeEntry>();
  private readonly withServiceAction = new Map<number, Map<number, OpcodeEntry>>();

  set(opcode: number, entry: OpcodeEntry): this {
    this.withServiceAction.delete(opcode);
    this.plain.set(opcode, entry);
    return this;
  }

  setServiceAction(opcode: number, serviceAction: number, entry: OpcodeEntry): this {
    this.plain.delete(opcode);
    let sub = this.withServiceAction.get(opcode);
    if (!sub) this.withServiceAction.set(opcode, (sub = new Map()));
    sub.set(serviceAction, entry);
    return this;
  }

  delete(opcode: number, serviceAction?: number): this {
    if (serviceAction === undefined) {
      this.plain.delete(opcode);
      this.withServiceAction.delete(opcode);
    } else {
      this.withServiceAction.get(opcode)?.delete(serviceAction);
    }
    return this;
  }

  hasServiceActions(opcode: number): boolean {
    return this.withServiceAction.has(opcode);
  }

  resolve(cdb: Buffer): Resolution {
    const opcode = cdb[0]!;
    const entry = this.plain.get(opcode);
    if (entry) return { kind: 'found', entry };
    const sub = this.withServiceAction.get(opcode);
    if (!sub) return { kind: 'invalid-opcode' };
    const serviceAction = serviceActionOf(cdb);
    const saEntry = sub.get(serviceAction);
    return saEntry ? { kind: 'found', entry: saEntry, serviceAction } : { kind: 'invalid-service-action' };
  }

  lookup(opcode: number, serviceAction?: number): OpcodeEntry | undefined {
    if (serviceAction === undefined) return this.plain.get(opcode);
    return this.withServiceAction.get(opcode)?.get(serviceAction);
  }

  /** Rows in opcode order, service actions ascending. */
  list(): ListedEntry[] {
    const rows: ListedEntry[] = [];
    for (const [opcode, entry] of this.plain)
      rows.push({ opcode, entry, cdbLength: lengthOf(opcode, entry) });
    for (const [opcode, sub] of this.withServiceAction) {
      for (const [serviceAction, entry] of sub) {
        rows.push({ opcode, serviceAction, entry, cdbLength: lengthOf(opcode, entry) });
      }
    }
    return rows.sort((a, b) => a.opcode - b.opcode || (a.serviceAction ?? 0) - (b.serviceAction ?? 0));
  }

  /** An independent copy a personality can override without touching the base. */
  clone(): OpcodeTable {
    const copy = new OpcodeTable();
    for (const [opcode, entry] of this.plain) copy.plain.set(opcode, entry);
    for (const [opcode, sub] of this.withServiceAction) copy.withServiceAction.set(opcode, new Map(sub));
    return copy;
  }
}

export function allowedWhenReserved(entry: OpcodeEntry, cdb: Buffer): boolean {
  const allowed = entry.allowedWhenReserved;
  return typeof allowed === 'function' ? allowed(cdb) : allowed === true;
}

export function lengthOf(opcode: number, entry: OpcodeEntry): number {
  return entry.cdbLength ?? cdbLengthForOpcode(opcode);
}
