import type { Logger } from 'pino';
import { SerialQueue } from '../util/serial-queue.js';
import { CONTROL_NACA, controlByte } from './cdb.js';
import { Asc, Opcode, ScsiStatus } from './constants.js';
import {
  allowedWhenReserved,
  type CommandContext,
  lengthOf,
  type OpcodeEntry,
  OpcodeTable,
} from './dispatch.js';
import type { DeviceIdentity } from './inquiry.js';
import { reportLunsData } from './report-luns.js';
import { installPersistentReserveCommands } from './persistent-reserve-commands.js';
import { PersistentReservations } from './persistent-reservations.js';
import { Reservation } from './reservation.js';
import { checkCondition, reservationConflict } from './result.js';
import { buildSense, Sense, ScsiError } from './sense.js';
import { defaultVpdPages, installSpcCommands, type SpcHost, type VpdPageBuilder } from './spc-commands.js';
import type { DeviceEvent, ScsiCommand, ScsiDevice, ScsiResult } from './types.js';
import { UnitAttentions } from './unit-attention.js';

export interface DeviceOptions {
  /** Establish POWER ON UA for every new I_T nexus (default true). */
  powerOnUnitAttention?: boolean;
  logger?: Logger;
}

/**
 * The SPC machinery every logical unit shares: a dispatch table preloaded with the common
 * commands, unit attentions and reservations per nexus, pending sense for REQUEST SENSE, and one
 * command at a time unless a row is marked concurrent. SSC and SMC models extend it and add rows.
 */
export class ScsiDeviceBase implements ScsiDevice, SpcHost {
  readonly table = new OpcodeTable();
  readonly unitAttentions: UnitAttentions;
  readonly reservation = new Reservation();
  readonly persistentReservations = new PersistentReservations();
  readonly vpdPages: Map<number, VpdPageBuilder>;
  protected readonly logger: Logger | undefined;
  private readonly queue = new SerialQueue();
  private readonly pendingSense = new Map<string, Buffer>();

  constructor(
    readonly peripheralType: number,
    readonly identity: DeviceIdentity,
    options: DeviceOptions = {},
  ) {
    this.unitAttentions = new UnitAttentions(options.powerOnUnitAttention ?? true);
    this.vpdPages = defaultVpdPages(this);
    this.logger = options.logger;
    installSpcCommands(this);
    installPersistentReserveCommands(this, this.table);
    // Answered by the target's LUN router; this row keeps the command listed and usable standalone.
    this.table.set(Opcode.REPORT_LUNS, {
      name: 'REPORT LUNS',
      handler: (ctx) => ({ status: ScsiStatus.GOOD, dataIn: reportLunsData([ctx.cmd.lun], ctx.cdb) }),
      uaExempt: true,
      allowedWhenReserved: true,
      concurrent: true,
    });
  }

  dataOutLength(cdb: Buffer): number {
    const r = this.table.resolve(cdb);
    return r.kind === 'found' ? (r.entry.dataOutLength?.(cdb) ?? 0) : 0;
  }

  async execute(cmd: ScsiCommand): Promise<ScsiResult> {
    const nexus = cmd.initiator;
    this.unitAttentions.touch(nexus);
    const resolved = this.table.resolve(cmd.cdb);
    // SAM-5 5.14: a pending unit attention wins over everything but the exempt commands, even
    // over an opcode the device does not know.
    if (resolved.kind !== 'found' || !resolved.entry.uaExempt) {
      const ua = this.unitAttentions.take(nexus);
      if (ua) return this.finish(nexus, checkCondition(Sense.unitAttention(ua)), cmd.cdb[0]!);
    }
    if (resolved.kind !== 'found') {
      const sense =
        resolved.kind === 'invalid-opcode' ? Sense.invalidOpcode() : Sense.invalidFieldInCdb(1, 4);
      return this.finish(nexus, checkCondition(sense), cmd.cdb[0]!);
    }
    const { entry } = resolved;
    const exempt = allowedWhenReserved(entry, cmd.cdb);
    if (!exempt && this.reservation.conflicts(nexus)) return reservationConflict();
    if (!exempt && this.persistentReservationConflict(nexus, entry)) return reservationConflict();
    if ((controlByte(cmd.cdb, lengthOf(cmd.cdb[0]!, entry)) & CONTROL_NACA) !== 0) {
      const byte = lengthOf(cmd.cdb[0]!, entry) - 1;
      return this.finish(nexus, checkCondition(Sense.invalidFieldInCdb(byte, 2)), cmd.cdb[0]!);
    }
    const ctx: CommandContext = { cmd, cdb: cmd.cdb, nexus };
    const run = () => this.runHandler(ctx, entry);
    const result = await (entry.concurrent ? run() : this.queue.run(run));
    return this.finish(nexus, result, cmd.cdb[0]!);
  }

  private persistentReservationConflict(nexus: string, entry: OpcodeEntry): boolean {
    if (entry.checksPersistentReservations) return false;
    const access = this.persistentReservations.access(nexus);
    return access === 'none' || (access === 'read' && !entry.readOnly);
  }

  /** Persistent reservations outlive LUN resets and nexus loss (SPC-4 5.13); only RESERVE(6/10) goes. */
  notify(event: DeviceEvent): void {
    switch (event.kind) {
      case 'lun-reset':
        this.reservation.clear();
        this.pendingSense.clear();
        this.unitAttentions.raise(Asc.BUS_DEVICE_RESET_FUNCTION, { except: event.by });
        break;
      case 'nexus-loss':
        if (this.reservation.heldBy === event.nexus) this.reservation.clear();
        this.pendingSense.delete(event.nexus);
        this.unitAttentions.forget(event.nexus);
        break;
      case 'tasks-aborted':
        break;
    }
  }

  /** Raises a unit attention for every nexus ("not ready to ready", "inventory changed", ...). */
  raiseUnitAttention(asc: readonly [number, number], scope?: { only?: string; except?: string }): void {
    this.unitAttentions.raise(asc, scope);
  }

  takePendingSense(nexus: string): Buffer | undefined {
    const sense = this.pendingSense.get(nexus);
    this.pendingSense.delete(nexus);
    return sense;
  }

  idleSense(_ctx: CommandContext): Buffer {
    return buildSense(Sense.noSense());
  }

  testUnitReady(_ctx: CommandContext): void | Promise<void> {}

  /**
   * Runs in the command queue before every handler but the unit-attention-exempt ones; a
   * device throws a ScsiError here to end the command before it takes effect (a tape drive's
   * deferred error).
   */
  protected beforeCommand(_ctx: CommandContext): void | Promise<void> {}

  private async runHandler(ctx: CommandContext, entry: OpcodeEntry): Promise<ScsiResult> {
    // Aborted while waiting behind another command: it must not take effect at all.
    if (ctx.cmd.signal?.aborted) return { status: ScsiStatus.TASK_ABORTED };
    try {
      if (!entry.uaExempt) await this.beforeCommand(ctx);
      return await entry.handler(ctx);
    } catch (err) {
      if (err instanceof ScsiError) {
        return err.sense ? { status: err.status, sense: err.sense } : { status: err.status };
      }
      this.logger?.error({ err, opcode: ctx.cdb[0] }, 'SCSI handler failed');
      return checkCondition(Sense.internalFailure());
    }
  }

  /** Keeps the sense of a CHECK CONDITION for a later REQUEST SENSE on the same nexus. */
  private finish(nexus: string, result: ScsiResult, opcode: number): ScsiResult {
    if (result.status === ScsiStatus.CHECK_CONDITION && result.sense) {
      this.pendingSense.set(nexus, result.sense);
    } else if (opcode !== Opcode.REQUEST_SENSE) {
      this.pendingSense.delete(nexus);
    }
    return result;
  }
}
