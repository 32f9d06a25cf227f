import type { Logger } from 'pino';
import { isDirectIoAligned, shareAlignedBuffer } from '../../media/aligned-buffers.js';
import { giveBlockBuffer, takeBlockBuffer } from '../../media/block-buffers.js';
import { executeRouted, routedDataOutLength } from '../../scsi/lun-router.js';
import { checkCondition } from '../../scsi/result.js';
import { Sense } from '../../scsi/sense.js';
import { ScsiStatus, SenseKey } from '../../scsi/constants.js';
import type { LunMap, ScsiResult } from '../../scsi/types.js';
import type { SessionParams } from './negotiation.js';
import { type SeqNumbers, dataIn, r2t, scsiResponse } from './pdu-builders.js';
import {
  FINAL,
  type IncomingPdu,
  READ_FLAG,
  RESERVED_TAG,
  RejectReason,
  WRITE_FLAG,
  dataSegmentLength,
  flagsOf,
  ittOf,
  word20,
} from './pdu.js';

const DATA_OFFSET_ERROR = [0x4b, 0x05] as const;

/** What a task needs from its session. */
export interface TaskHost {
  readonly params: SessionParams;
  /** Largest R2T burst: the negotiated MaxBurstLength capped by our limit. */
  readonly maxBurst: number;
  readonly nexus: string;
  readonly logger: Logger;
  /** Sequence numbers for the next PDU; `advance` consumes a StatSN. */
  sn(advance: boolean): SeqNumbers;
  send(bhs: Buffer, data?: Buffer, onSent?: () => void): void;
  batch(fn: () => void): void;
  nextTtt(): number;
  luns(): LunMap;
  reject(reason: number, bhs: Buffer): void;
  taskFinished(task: ScsiTask): void;
  /** The data a command that ran moved: Data-Out received (written) and Data-In sent (read). */
  transferred(lun: number, bytes: { read: number; written: number }): void;
}

/** A data-out sequence: the unsolicited burst or one R2T's burst, each numbered from DataSN 0. */
interface DataSequence {
  nextDataSn: number;
  nextOffset: number;
}

interface OutstandingR2t extends DataSequence {
  offset: number;
  length: number;
  received: number;
}

type TaskState = 'collecting' | 'running' | 'done' | 'aborted';

/**
 * One SCSI command from arrival to status: collects data-out (immediate, unsolicited, then R2T
 * bursts), runs it on the LUN, and returns data-in with the status collapsed into the last PDU.
 *
 * Block-sized buffers are recycled (media/block-buffers): the data-out buffer once the device
 * is done with it, the data-in once the socket has taken it. Devices copy what they keep.
 */
/** Smaller data-out segments are copied: landing them in place would not pay for itself. */
const LAND_IN_PLACE_MIN = 64 * 1024;

export class ScsiTask {
  readonly itt: number;
  readonly lun: number;
  readonly cmdSn: number;
  private readonly lunBytes: Buffer;
  private readonly cdb: Buffer;
  private readonly edtl: number;
  private readonly read: boolean;
  private readonly write: boolean;
  private readonly needed: number;
  private readonly want: number;
  private state: TaskState = 'collecting';
  private buffer: Buffer | undefined;
  private unsolicitedDone: boolean;
  private unsolicitedBytes = 0;
  private readonly unsolicited: DataSequence = { nextDataSn: 0, nextOffset: 0 };
  private nextR2tOffset = 0;
  private r2tSn = 0;
  private readonly r2ts = new Map<number, OutstandingR2t>();
  private readonly controller = new AbortController();
  private running: Promise<void> | undefined;

  /** A SCSI Command PDU's header; its immediate data follows in immediateData(). */
  constructor(
    private readonly host: TaskHost,
    bhs: Buffer,
    ahs: Buffer | undefined,
    lun: number,
  ) {
    const flags = flagsOf(bhs);
    this.itt = ittOf(bhs);
    this.lun = lun;
    this.cmdSn = bhs.readUInt32BE(24);
    this.lunBytes = Buffer.from(bhs.subarray(8, 16));
    // An extended CDB (AHS type 1) continues the 16 bytes of the BHS.
    this.cdb =
      ahs && ahs.length > 4 && ahs[2] === 0x01
        ? Buffer.concat([bhs.subarray(32, 48), ahs.subarray(4, 3 + ahs.readUInt16BE(0))])
        : Buffer.from(bhs.subarray(32, 48));
    this.edtl = word20(bhs);
    this.read = (flags & READ_FLAG) !== 0;
    this.write = (flags & WRITE_FLAG) !== 0;
    this.needed = this.write ? routedDataOutLength(host.luns(), lun, this.cdb) : 0;
    this.want = Math.min(this.needed, this.edtl);
    this.unsolicitedDone = (flags & FINAL) !== 0;
    const immediate = dataSegmentLength(bhs);
    this.unsolicitedBytes = immediate;
    this.unsolicited.nextOffset = immediate;
  }

  /** The command PDU's data segment, once it has all arrived. */
  immediateData(data: Buffer): void {
    // Aborted while its data arrived (a LUN reset from another session): the data is dropped.
    if (this.state !== 'collecting') return void giveBlockBuffer(data);
    if (data.length > 0) this.place(0, data);
  }

  get opcode(): number {
    return this.cdb[0]!;
  }

  /** Starts transfer or execution once the command PDU has been accepted in CmdSN order. */
  start(): void {
    this.progress();
  }

  /**
   * Where the command PDU's immediate data may land while it is still arriving: the first
   * bytes of this task's own buffer, so a large write's first burst is not copied there after
   * (a quarter of a 1 MiB WRITE from Linux's initiator). Undefined: a buffer of its own.
   */
  immediateLanding(): Buffer | undefined {
    return this.landing(0, this.unsolicitedBytes);
  }

  /**
   * Where a data-out's segment may land in place: the slice of this task's buffer it will
   * fill, when the PDU continues its sequence exactly as dataOut() will check and the buffer
   * is an aligned pool slot (which counts holders: the PDU holds the slot too until dataOut()
   * or the session gives its view back, so an abort meanwhile cannot hand the slot to another
   * task while the socket still reads into it). Undefined otherwise: the segment lands in a
   * buffer of its own and is copied, as before.
   */
  landingFor(bhs: Buffer, length: number): Buffer | undefined {
    if (this.state !== 'collecting') return undefined;
    const ttt = word20(bhs);
    const offset = bhs.readUInt32BE(40);
    const sequence =
      ttt === RESERVED_TAG ? (this.unsolicitedDone ? undefined : this.unsolicited) : this.r2ts.get(ttt);
    if (!sequence || bhs.readUInt32BE(36) !== sequence.nextDataSn || offset !== sequence.nextOffset) {
      return undefined;
    }
    if (ttt !== RESERVED_TAG) {
      const burst = sequence as OutstandingR2t;
      if (offset + length > burst.offset + burst.length) return undefined;
    }
    return this.landing(offset, length);
  }

  /** A view of this task's buffer for a segment to land in, held until the segment is placed. */
  private landing(offset: number, length: number): Buffer | undefined {
    if (length < LAND_IN_PLACE_MIN || offset + length > this.want) return undefined;
    this.buffer ??= takeBlockBuffer(this.want);
    if (!isDirectIoAligned(this.buffer)) return undefined;
    const view = this.buffer.subarray(offset, offset + length);
    shareAlignedBuffer(view);
    return view;
  }

  dataOut(pdu: IncomingPdu): void {
    if (this.state !== 'collecting') return void giveBlockBuffer(pdu.data);
    const { bhs } = pdu;
    const length = pdu.data.length;
    const ttt = word20(bhs);
    const offset = bhs.readUInt32BE(40);
    if (offset + length > this.edtl) return this.sequenceError(bhs);
    const sequence =
      ttt === RESERVED_TAG ? (this.unsolicitedDone ? undefined : this.unsolicited) : this.r2ts.get(ttt);
    if (!sequence) return this.host.reject(RejectReason.INVALID_PDU_FIELD, bhs);
    // DataPDUInOrder=Yes: each PDU continues its sequence exactly (RFC 7143 13.19).
    if (bhs.readUInt32BE(36) !== sequence.nextDataSn || offset !== sequence.nextOffset)
      return this.sequenceError(bhs);
    sequence.nextDataSn++;
    sequence.nextOffset += length;
    if (ttt === RESERVED_TAG) {
      this.place(offset, pdu.data);
      this.unsolicitedBytes = Math.max(this.unsolicitedBytes, offset + length);
      if ((flagsOf(bhs) & FINAL) !== 0) this.unsolicitedDone = true;
    } else {
      const burst = sequence as OutstandingR2t;
      if (offset + length > burst.offset + burst.length) return this.sequenceError(bhs);
      this.place(offset, pdu.data);
      burst.received += length;
      if (burst.received >= burst.length) this.r2ts.delete(ttt);
    }
    this.progress();
  }

  /** Ends the task without a response (ABORT TASK, LUN RESET, connection loss). */
  async abort(): Promise<void> {
    if (this.state === 'done' || this.state === 'aborted') return;
    const wasRunning = this.state === 'running';
    if (this.state === 'collecting') this.dropCollected();
    this.state = 'aborted';
    this.r2ts.clear();
    this.controller.abort();
    if (wasRunning) await this.running?.catch(() => undefined);
    this.host.taskFinished(this);
  }

  /** Ends the task with CHECK CONDITION before it ran (a data digest error on its data-out). */
  fail(result: ScsiResult): void {
    if (this.state !== 'collecting') return;
    this.dropCollected();
    this.state = 'done';
    this.respond(result);
    this.host.taskFinished(this);
  }

  /**
   * A data-out that breaks its sequence: at ErrorRecoveryLevel 0 the data cannot be asked for
   * again, so the PDU is rejected and the command ends with ABORTED COMMAND.
   */
  private sequenceError(bhs: Buffer): void {
    this.host.reject(RejectReason.PROTOCOL_ERROR, bhs);
    this.fail(checkCondition(Sense.of(SenseKey.ABORTED_COMMAND, DATA_OFFSET_ERROR)));
  }

  /** The data-out gathered for a command that will not run goes back to the pool. */
  private dropCollected(): void {
    if (this.buffer) giveBlockBuffer(this.buffer);
    this.buffer = undefined;
  }

  private place(offset: number, data: Buffer): void {
    const buf = this.buffer;
    if (buf && data.buffer === buf.buffer && data.byteOffset === buf.byteOffset + offset) {
      // Landed in place (landingFor): the PDU's hold on the slot ends, the task's goes on.
      giveBlockBuffer(data);
      return;
    }
    if (offset >= this.want) return;
    const n = Math.min(data.length, this.want - offset);
    if (!this.buffer && offset === 0 && n === this.want) {
      // The whole transfer arrived in one segment: hand that slice to the device, no copy.
      this.buffer = data.subarray(0, n);
      return;
    }
    this.buffer ??= takeBlockBuffer(this.want);
    data.copy(this.buffer, offset, 0, n);
    // The segment was gathered for this task alone (or is a slice the pool ignores).
    giveBlockBuffer(data);
  }

  private progress(): void {
    if (this.state !== 'collecting' || !this.unsolicitedDone) return;
    if (this.r2tSn === 0 && this.nextR2tOffset === 0) this.nextR2tOffset = this.unsolicitedBytes;
    const maxOutstanding = this.host.params.maxOutstandingR2T;
    while (this.r2ts.size < maxOutstanding && this.nextR2tOffset < this.want) {
      const length = Math.min(this.host.maxBurst, this.want - this.nextR2tOffset);
      const ttt = this.host.nextTtt();
      const offset = this.nextR2tOffset;
      this.r2ts.set(ttt, { offset, length, received: 0, nextDataSn: 0, nextOffset: offset });
      const fields = {
        itt: this.itt,
        lun: this.lunBytes,
        ttt,
        r2tSn: this.r2tSn++,
        offset: this.nextR2tOffset,
        length,
      };
      this.host.send(r2t(fields, this.host.sn(false)));
      this.nextR2tOffset += length;
    }
    if (this.r2ts.size === 0 && this.nextR2tOffset >= this.want) {
      this.state = 'running';
      this.running = this.execute();
    }
  }

  private async execute(): Promise<void> {
    let result: ScsiResult;
    const buffer = this.buffer;
    this.buffer = undefined;
    try {
      result = await executeRouted(this.host.luns(), {
        cdb: this.cdb,
        ...(this.want > 0 ? { dataOut: buffer ?? Buffer.alloc(0) } : {}),
        expectedDataInLength: this.read ? this.edtl : 0,
        initiator: this.host.nexus,
        lun: this.lun,
        signal: this.controller.signal,
      });
    } catch (err) {
      this.host.logger.error({ err, opcode: this.opcode, lun: this.lun }, 'device failed a command');
      result = checkCondition(Sense.internalFailure());
    }
    if (buffer) {
      // A tape drive may still be writing the data out from its buffer.
      const release = () => giveBlockBuffer(buffer);
      if (result.dataOutInUse) void result.dataOutInUse.then(release, release);
      else giveBlockBuffer(buffer);
    }
    if (this.state !== 'running') return;
    this.state = 'done';
    const sent = this.respond(result);
    this.host.transferred(this.lun, { read: sent, written: this.want });
    this.host.taskFinished(this);
  }

  /** Sends the data-in and the status; returns how many data-in bytes it sent. */
  private respond(result: ScsiResult): number {
    const data = this.read ? result.dataIn : undefined;
    const available = data?.length ?? 0;
    const length = Math.min(available, this.edtl);
    let residual = 0;
    let overflow = false;
    if (this.write) {
      overflow = this.needed > this.edtl;
      residual = overflow ? this.needed - this.edtl : this.edtl - this.want;
    } else if (available > this.edtl) {
      overflow = true;
      residual = available - this.edtl;
    } else {
      residual = result.residual ?? this.edtl - length;
    }
    const collapse = length > 0 && result.status === ScsiStatus.GOOD && !result.sense;
    // The device handed the data-in over; it goes back to the pool once the socket has it.
    const release = data ? () => giveBlockBuffer(data) : undefined;
    if (data && length === 0) release?.();
    this.host.batch(() => {
      const dataSn =
        data && length > 0
          ? this.sendDataIn(
              data,
              length,
              collapse ? { status: result.status, residual, overflow } : undefined,
              release,
            )
          : 0;
      if (collapse) return;
      const sense = result.sense;
      const fields = {
        itt: this.itt,
        status: result.status,
        senseLength: sense?.length ?? 0,
        residual,
        overflow,
        expDataSn: dataSn + this.r2tSn,
      };
      const payload = sense ? Buffer.concat([u16(sense.length), sense]) : undefined;
      this.host.send(scsiResponse(fields, this.host.sn(true)), payload);
    });
    return length;
  }

  /** Sends data-in in segments of the initiator's MaxRecvDataSegmentLength; returns the PDU count. */
  private sendDataIn(
    data: Buffer,
    length: number,
    status: { status: number; residual: number; overflow: boolean } | undefined,
    onSent: (() => void) | undefined,
  ): number {
    const segment = this.host.params.initiatorMaxRecvDataSegmentLength;
    const burst = this.host.params.maxBurstLength;
    let offset = 0;
    let dataSn = 0;
    let burstLeft = burst;
    while (offset < length) {
      const n = Math.min(segment, length - offset, burstLeft);
      const last = offset + n === length;
      burstLeft -= n;
      // F closes each Data-In sequence, which MaxBurstLength bounds (RFC 7143 11.7.1).
      const final = last || burstLeft === 0;
      if (burstLeft === 0) burstLeft = burst;
      const withStatus = last ? status : undefined;
      const fields = {
        itt: this.itt,
        lun: this.lunBytes,
        dataSn: dataSn++,
        offset,
        length: n,
        final,
        ...(withStatus ? { status: withStatus } : {}),
      };
      this.host.send(
        dataIn(fields, this.host.sn(withStatus !== undefined)),
        data.subarray(offset, offset + n),
        last ? onSent : undefined,
      );
      offset += n;
    }
    return dataSn;
  }
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n, 0);
  return b;
}
