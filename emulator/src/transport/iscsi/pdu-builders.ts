import { BHS_LENGTH, FINAL, Op, RESERVED_TAG } from './pdu.js';

/** The sequence numbers every target PDU carries at bytes 24-35. */
export interface SeqNumbers {
  statSn: number;
  expCmdSn: number;
  maxCmdSn: number;
}

function header(opcode: number, flags: number, dataLength: number, itt: number, sn: SeqNumbers): Buffer {
  const bhs = Buffer.alloc(BHS_LENGTH);
  bhs[0] = opcode;
  bhs[1] = flags;
  bhs.writeUInt32BE(dataLength & 0xffffff, 4);
  bhs.writeUInt32BE(itt >>> 0, 16);
  bhs.writeUInt32BE(sn.statSn >>> 0, 24);
  bhs.writeUInt32BE(sn.expCmdSn >>> 0, 28);
  bhs.writeUInt32BE(sn.maxCmdSn >>> 0, 32);
  return bhs;
}

export interface LoginResponseFields {
  flags: number;
  isid: Buffer;
  tsih: number;
  itt: number;
  statusClass: number;
  statusDetail: number;
  dataLength: number;
}

export function loginResponse(f: LoginResponseFields, sn: SeqNumbers): Buffer {
  const bhs = header(Op.LOGIN_RESPONSE, f.flags, f.dataLength, f.itt, sn);
  // Version-max and version-active stay 0x00, the only version there is.
  f.isid.copy(bhs, 8, 0, 6);
  bhs.writeUInt16BE(f.tsih, 14);
  bhs[36] = f.statusClass;
  bhs[37] = f.statusDetail;
  return bhs;
}

export function textResponse(itt: number, dataLength: number, sn: SeqNumbers): Buffer {
  const bhs = header(Op.TEXT_RESPONSE, FINAL, dataLength, itt, sn);
  bhs.writeUInt32BE(RESERVED_TAG, 20);
  return bhs;
}

export interface ScsiResponseFields {
  itt: number;
  status: number;
  senseLength: number;
  /** Bytes not transferred (underflow) or not requested (overflow). */
  residual: number;
  overflow: boolean;
  expDataSn: number;
}

export function scsiResponse(f: ScsiResponseFields, sn: SeqNumbers): Buffer {
  const flags = FINAL | residualFlags(f.residual, f.overflow);
  const bhs = header(Op.SCSI_RESPONSE, flags, f.senseLength ? f.senseLength + 2 : 0, f.itt, sn);
  bhs[2] = 0x00; // Command Completed at Target
  bhs[3] = f.status;
  bhs.writeUInt32BE(f.expDataSn >>> 0, 36);
  bhs.writeUInt32BE(f.residual >>> 0, 44);
  return bhs;
}

function residualFlags(residual: number, overflow: boolean): number {
  if (residual === 0) return 0;
  return overflow ? 0x04 : 0x02;
}

export interface DataInFields {
  itt: number;
  lun: Buffer;
  dataSn: number;
  offset: number;
  length: number;
  final: boolean;
  /** Present on the last PDU when status is collapsed into it (S bit). */
  status?: { status: number; residual: number; overflow: boolean };
}

export function dataIn(f: DataInFields, sn: SeqNumbers): Buffer {
  let flags = f.final ? FINAL : 0;
  if (f.status) flags |= 0x01 | residualFlags(f.status.residual, f.status.overflow);
  // StatSN is only meaningful (and only advanced) when the S bit is set.
  const bhs = header(Op.DATA_IN, flags, f.length, f.itt, f.status ? sn : { ...sn, statSn: 0 });
  if (f.status) {
    bhs[3] = f.status.status;
    bhs.writeUInt32BE(f.status.residual >>> 0, 44);
  }
  f.lun.copy(bhs, 8, 0, 8);
  bhs.writeUInt32BE(RESERVED_TAG, 20);
  bhs.writeUInt32BE(f.dataSn >>> 0, 36);
  bhs.writeUInt32BE(f.offset >>> 0, 40);
  return bhs;
}

export interface R2tFields {
  itt: number;
  lun: Buffer;
  ttt: number;
  r2tSn: number;
  offset: number;
  length: number;
}

export function r2t(f: R2tFields, sn: SeqNumbers): Buffer {
  const bhs = header(Op.R2T, FINAL, 0, f.itt, sn);
  f.lun.copy(bhs, 8, 0, 8);
  bhs.writeUInt32BE(f.ttt >>> 0, 20);
  bhs.writeUInt32BE(f.r2tSn >>> 0, 36);
  bhs.writeUInt32BE(f.offset >>> 0, 40);
  bhs.writeUInt32BE(f.length >>> 0, 44);
  return bhs;
}

export function nopIn(
  itt: number,
  ttt: number,
  lun: Buffer | undefined,
  dataLength: number,
  sn: SeqNumbers,
): Buffer {
  const bhs = header(Op.NOP_IN, FINAL, dataLength, itt, sn);
  lun?.copy(bhs, 8, 0, 8);
  bhs.writeUInt32BE(ttt >>> 0, 20);
  return bhs;
}

export function logoutResponse(itt: number, response: number, time2Wait: number, sn: SeqNumbers): Buffer {
  const bhs = header(Op.LOGOUT_RESPONSE, FINAL, 0, itt, sn);
  bhs[2] = response;
  bhs.writeUInt16BE(time2Wait, 40);
  bhs.writeUInt16BE(0, 42);
  return bhs;
}

export function taskMgmtResponse(itt: number, response: number, sn: SeqNumbers): Buffer {
  const bhs = header(Op.TASK_MGMT_RESPONSE, FINAL, 0, itt, sn);
  bhs[2] = response;
  return bhs;
}

/** Reject: the data segment is the offending PDU's BHS. */
export function reject(reason: number, sn: SeqNumbers): Buffer {
  const bhs = header(Op.REJECT, FINAL, BHS_LENGTH, RESERVED_TAG, sn);
  bhs[2] = reason;
  return bhs;
}

/** Asynchronous message; event 1 asks the initiator to log out within `seconds`. */
export function asyncMessage(event: number, parameter3: number, sn: SeqNumbers): Buffer {
  const bhs = header(Op.ASYNC_MESSAGE, FINAL, 0, RESERVED_TAG, sn);
  bhs.writeUInt32BE(0, 20);
  bhs[36] = event;
  bhs.writeUInt16BE(parameter3, 42);
  return bhs;
}
