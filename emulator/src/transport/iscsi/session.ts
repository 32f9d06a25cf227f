import type { Logger } from 'pino';
import type { LunMap, ScsiDevice } from '../../scsi/types.js';
import { decodeLun } from '../../scsi/lun.js';
import { giveBlockBuffer } from '../../media/block-buffers.js';
import { checkCondition } from '../../scsi/result.js';
import { Sense } from '../../scsi/sense.js';
import { Asc, SenseKey } from '../../scsi/constants.js';
import type { LoginOutcome } from './login.js';
import type { SessionParams, TargetLimits } from './negotiation.js';
import {
  type SeqNumbers,
  logoutResponse,
  nopIn,
  reject,
  taskMgmtResponse,
  textResponse,
} from './pdu-builders.js';
import {
  type IncomingPdu,
  Op,
  RESERVED_TAG,
  RejectReason,
  WRITE_FLAG,
  cmdSnOf,
  flagsOf,
  isImmediate,
  ittOf,
  opcodeOf,
  word20,
} from './pdu.js';
import { ScsiTask, type TaskHost } from './scsi-task.js';
import { snAdd, snLessOrEqual, snLessThan } from './serial-number.js';
import { performTaskManagement } from './task-management.js';
import { type KeyValue, parseKeys, serializeKeys } from './text-keys.js';

/** What a session needs from its connection and its target. */
export interface SessionEnv {
  readonly logger: Logger;
  readonly limits: TargetLimits;
  /** How many commands may be outstanding (MaxCmdSN - ExpCmdSN + 1). */
  readonly commandWindow: number;
  /** Queues a PDU; `onSent` runs once the socket has taken the data segment. */
  send(bhs: Buffer, data?: Buffer, onSent?: () => void): void;
  batch(fn: () => void): void;
  /** Ends the connection after queued output is flushed. */
  close(reason: string): void;
  /** The LUN map this session's initiator sees now (already filtered by its access). */
  luns(): LunMap;
  sendTargets(value: string): KeyValue[];
  resetLogicalUnit(device: ScsiDevice, by: string): Promise<void>;
  /** A NOP-Out answered the target's ping with this TTT. */
  pingAnswered(ttt: number): void;
  /** The data a command moved on a LUN (TaskHost.transferred). */
  transferred(lun: number, bytes: { read: number; written: number }): void;
}

/**
 * The full feature phase of one session (one connection): CmdSN ordering, StatSN, SCSI tasks,
 * NOP, Text, Logout and task management.
 */
export class IscsiSession implements TaskHost {
  readonly tasks = new Map<number, ScsiTask>();
  readonly params: SessionParams;
  readonly maxBurst: number;
  readonly nexus: string;
  readonly logger: Logger;
  readonly loggedInAt = new Date();
  expCmdSn: number;
  private statSn: number;
  private ttt = 0;
  private readonly queued = new Map<number, { pdu: IncomingPdu; run: () => void }>();
  private loggingOut = false;
  /** The write command taken at its header (taskAtHeader) until its whole PDU is handled. */
  private takenAtHeader: ScsiTask | undefined;

  constructor(
    readonly login: LoginOutcome,
    private readonly env: SessionEnv,
    statSn: number,
  ) {
    this.params = login.params;
    this.maxBurst = Math.min(login.params.maxBurstLength, env.limits.maxBurstLength);
    this.nexus = `${login.initiatorName},i,0x${login.isid.toString('hex')}`;
    this.logger = env.logger;
    this.expCmdSn = login.expCmdSn;
    this.statSn = statSn;
  }

  get discovery(): boolean {
    return this.login.type === 'Discovery';
  }

  sn(advance: boolean): SeqNumbers {
    const sn = { statSn: this.statSn, expCmdSn: this.expCmdSn, maxCmdSn: this.maxCmdSn() };
    if (advance) this.statSn = snAdd(this.statSn, 1);
    return sn;
  }

  private maxCmdSn(): number {
    return snAdd(this.expCmdSn, this.env.commandWindow - 1);
  }

  send(bhs: Buffer, data?: Buffer, onSent?: () => void): void {
    this.env.send(bhs, data, onSent);
  }

  batch(fn: () => void): void {
    this.env.batch(fn);
  }

  nextTtt(): number {
    this.ttt = (this.ttt + 1) % RESERVED_TAG;
    return this.ttt;
  }

  luns(): LunMap {
    return this.env.luns();
  }

  deviceAt(lun: number): ScsiDevice | undefined {
    return this.env.luns().get(lun);
  }

  resetLogicalUnit(device: ScsiDevice, by: string): Promise<void> {
    return this.env.resetLogicalUnit(device, by);
  }

  transferred(lun: number, bytes: { read: number; written: number }): void {
    this.env.transferred(lun, bytes);
  }

  reject(reason: number, bhs: Buffer): void {
    this.logger.warn({ reason, opcode: opcodeOf(bhs) }, 'rejecting PDU');
    this.send(reject(reason, this.sn(true)), Buffer.from(bhs.subarray(0, 48)));
  }

  taskFinished(task: ScsiTask): void {
    if (this.tasks.get(task.itt) === task) this.tasks.delete(task.itt);
  }

  /** Aborts this session's tasks on a device (LUN reset, from any session). */
  async abortTasksOn(device: ScsiDevice): Promise<void> {
    const luns = this.env.luns();
    await Promise.all(
      [...this.tasks.values()].filter((t) => luns.get(t.lun) === device).map((t) => t.abort()),
    );
  }

  /** The connection is gone: no responses can be sent, so tasks end silently. */
  async end(): Promise<void> {
    // PDUs still waiting for a CmdSN gap will never run; their data segments go back.
    for (const { pdu } of this.queued.values()) giveBlockBuffer(pdu.data);
    this.queued.clear();
    await Promise.all([...this.tasks.values()].map((t) => t.abort()));
    for (const device of new Set(this.env.luns().values()))
      device.notify?.({ kind: 'nexus-loss', nexus: this.nexus });
  }

  /**
   * A PDU's header has been read and its data segment is on its way (PduReader.segmentFor):
   * a data-out's segment or a write command's immediate data may land in place in its task's
   * buffer. Returns where, or undefined for a buffer of its own.
   */
  landingFor(bhs: Buffer, ahs: Buffer | undefined, dataLength: number): Buffer | undefined {
    const op = opcodeOf(bhs);
    if (op === Op.DATA_OUT) return this.tasks.get(ittOf(bhs))?.landingFor(bhs, dataLength);
    if (op === Op.SCSI_COMMAND) return this.taskAtHeader(bhs, ahs)?.immediateLanding();
    return undefined;
  }

  /**
   * Takes a write command at its header when it will run the moment its PDU is complete: it
   * is next in CmdSN order (or immediate), its task tag is free, and no data digest could still
   * make the PDU be discarded. handle() gives the task its immediate data with the PDU, the
   * next one the reader completes. A LUN reset meanwhile aborts it like any task received.
   */
  private taskAtHeader(bhs: Buffer, ahs: Buffer | undefined): ScsiTask | undefined {
    if (this.discovery || this.loggingOut || this.params.dataDigest) return undefined;
    if ((flagsOf(bhs) & WRITE_FLAG) === 0 || this.tasks.has(ittOf(bhs))) return undefined;
    if (!isImmediate(bhs) && cmdSnOf(bhs) !== this.expCmdSn) return undefined;
    const task = new ScsiTask(this, bhs, ahs, decodeLun(bhs, 8));
    this.tasks.set(task.itt, task);
    this.takenAtHeader = task;
    return task;
  }

  handle(pdu: IncomingPdu): void {
    const { bhs } = pdu;
    const op = opcodeOf(bhs);
    const taken = this.takenAtHeader;
    this.takenAtHeader = undefined;
    if (taken) {
      return this.ordered(pdu, () => {
        taken.immediateData(pdu.data);
        taken.start();
      });
    }
    if (pdu.dataDigestError) return this.dataDigestError(pdu);
    if (this.loggingOut && op !== Op.DATA_OUT) return this.reject(RejectReason.WAITING_FOR_LOGOUT, bhs);
    switch (op) {
      case Op.DATA_OUT: {
        const task = this.tasks.get(ittOf(bhs));
        // Data for a task already aborted is dropped without comment (RFC 7143 4.2.3.3).
        if (task) return task.dataOut(pdu);
        this.logger.debug({ itt: ittOf(bhs) }, 'data-out for unknown task dropped');
        // It may have landed in the buffer of a task aborted meanwhile: that view goes back too.
        giveBlockBuffer(pdu.data);
        return;
      }
      case Op.SCSI_COMMAND:
        if (this.discovery) return this.reject(RejectReason.PROTOCOL_ERROR, bhs);
        return this.ordered(pdu, () => this.scsiCommand(pdu));
      case Op.NOP_OUT:
        // ITT 0xffffffff: an answer to our ping (TTT set) or a bare ExpStatSN update.
        if (ittOf(bhs) === RESERVED_TAG) return this.env.pingAnswered(word20(bhs));
        return this.ordered(pdu, () => this.nopOut(pdu));
      case Op.TEXT_REQUEST:
        return this.ordered(pdu, () => this.text(pdu));
      case Op.LOGOUT_REQUEST:
        return this.ordered(pdu, () => this.logout(pdu));
      case Op.TASK_MGMT_REQUEST:
        if (this.discovery) return this.reject(RejectReason.PROTOCOL_ERROR, bhs);
        return this.ordered(pdu, () => void this.taskManagement(pdu));
      case Op.SNACK_REQUEST:
        // ErrorRecoveryLevel 0 has no SNACK (RFC 7143 11.16).
        return this.reject(RejectReason.PROTOCOL_ERROR, bhs);
      case Op.LOGIN_REQUEST:
        return this.reject(RejectReason.PROTOCOL_ERROR, bhs);
      default:
        return this.reject(RejectReason.COMMAND_NOT_SUPPORTED, bhs);
    }
  }

  /**
   * Delivers non-immediate PDUs in CmdSN order. Ahead-of-window PDUs wait for the gap; stale
   * or out-of-window ones are dropped silently, as RFC 7143 4.2.2.1 requires.
   */
  private ordered(pdu: IncomingPdu, run: () => void): void {
    if (isImmediate(pdu.bhs)) return run();
    const cmdSn = cmdSnOf(pdu.bhs);
    if (cmdSn === this.expCmdSn) {
      this.expCmdSn = snAdd(this.expCmdSn, 1);
      run();
      for (let next = this.queued.get(this.expCmdSn); next; next = this.queued.get(this.expCmdSn)) {
        this.queued.delete(this.expCmdSn);
        this.expCmdSn = snAdd(this.expCmdSn, 1);
        next.run();
      }
    } else if (snLessThan(this.expCmdSn, cmdSn) && snLessOrEqual(cmdSn, this.maxCmdSn())) {
      this.queued.set(cmdSn, { pdu, run });
    } else {
      this.logger.warn({ cmdSn, expCmdSn: this.expCmdSn }, 'PDU outside the CmdSN window dropped');
      // Its data segment (a write's immediate data) may be a pooled block no one else holds.
      giveBlockBuffer(pdu.data);
    }
  }

  private scsiCommand(pdu: IncomingPdu): void {
    const itt = ittOf(pdu.bhs);
    if (this.tasks.has(itt)) return this.reject(RejectReason.TASK_IN_PROGRESS, pdu.bhs);
    const task = new ScsiTask(this, pdu.bhs, pdu.ahs, decodeLun(pdu.bhs, 8));
    this.tasks.set(itt, task);
    task.immediateData(pdu.data);
    task.start();
  }

  private dataDigestError(pdu: IncomingPdu): void {
    this.reject(RejectReason.DATA_DIGEST_ERROR, pdu.bhs);
    const task = opcodeOf(pdu.bhs) === Op.DATA_OUT ? this.tasks.get(ittOf(pdu.bhs)) : undefined;
    task?.fail(checkCondition(Sense.of(SenseKey.ABORTED_COMMAND, Asc.PROTOCOL_SERVICE_CRC_ERROR)));
    if (opcodeOf(pdu.bhs) === Op.DATA_OUT) giveBlockBuffer(pdu.data);
  }

  private nopOut(pdu: IncomingPdu): void {
    const ping = pdu.data.subarray(0, this.params.initiatorMaxRecvDataSegmentLength);
    const bhs = nopIn(ittOf(pdu.bhs), RESERVED_TAG, pdu.bhs.subarray(8, 16), ping.length, this.sn(true));
    this.send(bhs, ping);
  }

  private text(pdu: IncomingPdu): void {
    const reply: KeyValue[] = [];
    for (const [key, value] of parseKeys(pdu.data).pairs) {
      if (key === 'SendTargets') reply.push(...this.env.sendTargets(value));
      else reply.push([key, 'NotUnderstood']);
    }
    const data = serializeKeys(reply);
    this.send(textResponse(ittOf(pdu.bhs), data.length, this.sn(true)), data);
  }

  private logout(pdu: IncomingPdu): void {
    const reason = flagsOf(pdu.bhs) & 0x7f;
    // Reason 2 (remove the connection for recovery) needs ErrorRecoveryLevel 2.
    const response = reason === 2 ? 2 : 0;
    this.loggingOut = response === 0;
    this.send(logoutResponse(ittOf(pdu.bhs), response, 0, this.sn(true)));
    if (response === 0) this.env.close('logout');
  }

  private async taskManagement(pdu: IncomingPdu): Promise<void> {
    const { bhs } = pdu;
    const request = {
      fn: flagsOf(bhs) & 0x7f,
      lun: decodeLun(bhs, 8),
      referencedTaskTag: word20(bhs),
      cmdSn: cmdSnOf(bhs),
      refCmdSn: bhs.readUInt32BE(32),
    };
    const response = await performTaskManagement(this, request);
    this.logger.info({ ...request, response }, 'task management');
    this.send(taskMgmtResponse(ittOf(bhs), response, this.sn(true)));
  }
}
