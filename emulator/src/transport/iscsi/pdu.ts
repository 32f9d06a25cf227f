/** iSCSI opcodes (RFC 7143 11.2.1.2). */
export const Op = {
  NOP_OUT: 0x00,
  SCSI_COMMAND: 0x01,
  TASK_MGMT_REQUEST: 0x02,
  LOGIN_REQUEST: 0x03,
  TEXT_REQUEST: 0x04,
  DATA_OUT: 0x05,
  LOGOUT_REQUEST: 0x06,
  SNACK_REQUEST: 0x10,
  NOP_IN: 0x20,
  SCSI_RESPONSE: 0x21,
  TASK_MGMT_RESPONSE: 0x22,
  LOGIN_RESPONSE: 0x23,
  TEXT_RESPONSE: 0x24,
  DATA_IN: 0x25,
  LOGOUT_RESPONSE: 0x26,
  R2T: 0x31,
  ASYNC_MESSAGE: 0x32,
  REJECT: 0x3f,
} as const;

export const BHS_LENGTH = 48;
export const RESERVED_TAG = 0xffffffff;
/** Byte 0 bit 6: deliver at once, outside CmdSN ordering. */
export const IMMEDIATE = 0x40;
/** Byte 1 bit 7: F (final) in most PDUs, T (transit) in login PDUs. */
export const FINAL = 0x80;
/** SCSI Command byte 1: R, the command expects data-in; W, it carries data-out. */
export const READ_FLAG = 0x40;
export const WRITE_FLAG = 0x20;

/** Reject reason codes (RFC 7143 11.17.1). */
export const RejectReason = {
  DATA_DIGEST_ERROR: 0x02,
  SNACK_REJECT: 0x03,
  PROTOCOL_ERROR: 0x04,
  COMMAND_NOT_SUPPORTED: 0x05,
  IMMEDIATE_COMMAND_REJECT: 0x06,
  TASK_IN_PROGRESS: 0x07,
  INVALID_DATA_ACK: 0x08,
  INVALID_PDU_FIELD: 0x09,
  OUT_OF_RESOURCES: 0x0a,
  WAITING_FOR_LOGOUT: 0x0c,
} as const;

/** A PDU received from the initiator. */
export interface IncomingPdu {
  bhs: Buffer;
  ahs: Buffer | undefined;
  /** The data segment without padding, in a buffer of its own (pooled when block-sized). */
  readonly data: Buffer;
  /** The data digest did not match (only when DataDigest=CRC32C). */
  dataDigestError: boolean;
}

export function opcodeOf(bhs: Buffer): number {
  return bhs[0]! & 0x3f;
}

export function isImmediate(bhs: Buffer): boolean {
  return (bhs[0]! & IMMEDIATE) !== 0;
}

export function flagsOf(bhs: Buffer): number {
  return bhs[1]!;
}

export function dataSegmentLength(bhs: Buffer): number {
  return (bhs[5]! << 16) | (bhs[6]! << 8) | bhs[7]!;
}

export function ittOf(bhs: Buffer): number {
  return bhs.readUInt32BE(16);
}

/** Field at byte 20: TTT, EDTL, RTT or CID depending on the opcode. */
export function word20(bhs: Buffer): number {
  return bhs.readUInt32BE(20);
}

export function cmdSnOf(bhs: Buffer): number {
  return bhs.readUInt32BE(24);
}

export function expStatSnOf(bhs: Buffer): number {
  return bhs.readUInt32BE(28);
}

export function opcodeName(op: number): string {
  for (const [name, value] of Object.entries(Op)) if (value === op) return name;
  return `0x${op.toString(16)}`;
}
