import { Asc, type AscPair, ScsiStatus, SenseKey } from './constants.js';

/** Where an ILLEGAL REQUEST points: a byte (and optionally bit) of the CDB or parameter list. */
export interface FieldPointer {
  /** true: the field is in the CDB (C/D bit); false: in the data-out parameter list. */
  inCdb: boolean;
  byte: number;
  /** Bit 0-7 within the byte (the most significant bit of the field); absent: whole byte. */
  bit?: number;
}

/** Everything fixed-format sense data (SPC-4 4.5.3) can say. */
export interface SenseSpec {
  key: number;
  asc: number;
  ascq: number;
  /** Filemark read (SSC). */
  filemark?: boolean;
  /** End of medium / partition (SSC), or end of element list. */
  eom?: boolean;
  /** Incorrect length indicator (SSC reads with fixed=0). */
  ili?: boolean;
  /** Information field; signed because tape residuals go negative for oversized blocks. */
  information?: number;
  commandSpecific?: number;
  fieldPointer?: FieldPointer;
  /** Progress indication 0..65535 for NOT READY "in progress" (sense-key specific). */
  progress?: number;
  deferred?: boolean;
  fru?: number;
  /** Vendor bytes after the 18-byte standard part (IBM drives return longer sense). */
  vendor?: Buffer;
}

const FIXED_LENGTH = 18;

/** Builds fixed-format sense data. */
export function buildSense(spec: SenseSpec): Buffer {
  const vendorLength = spec.vendor?.length ?? 0;
  const out = Buffer.alloc(FIXED_LENGTH + vendorLength);
  const infoValid = spec.information !== undefined;
  out[0] = (infoValid ? 0x80 : 0) | (spec.deferred ? 0x71 : 0x70);
  out[2] = (spec.filemark ? 0x80 : 0) | (spec.eom ? 0x40 : 0) | (spec.ili ? 0x20 : 0) | (spec.key & 0x0f);
  if (infoValid) out.writeInt32BE(clampInt32(spec.information!), 3);
  out[7] = FIXED_LENGTH - 8 + vendorLength;
  if (spec.commandSpecific !== undefined) out.writeUInt32BE(spec.commandSpecific >>> 0, 8);
  out[12] = spec.asc;
  out[13] = spec.ascq;
  out[14] = spec.fru ?? 0;
  if (spec.fieldPointer) {
    const { inCdb, byte, bit } = spec.fieldPointer;
    out[15] = 0x80 | (inCdb ? 0x40 : 0) | (bit !== undefined ? 0x08 | (bit & 0x07) : 0);
    out.writeUInt16BE(byte & 0xffff, 16);
  } else if (spec.progress !== undefined) {
    out[15] = 0x80;
    out.writeUInt16BE(spec.progress & 0xffff, 16);
  }
  if (spec.vendor) spec.vendor.copy(out, FIXED_LENGTH);
  return out;
}

function clampInt32(n: number): number {
  return Math.max(-0x80000000, Math.min(0x7fffffff, Math.trunc(n)));
}

/** Decoded sense data, for tests, logs and the initiator harness. */
export interface ParsedSense {
  responseCode: number;
  key: number;
  asc: number;
  ascq: number;
  filemark: boolean;
  eom: boolean;
  ili: boolean;
  information?: number;
  fieldPointer?: FieldPointer;
}

/** Decodes fixed (0x70/0x71) or descriptor (0x72/0x73) sense headers. */
export function parseSense(buf: Buffer): ParsedSense {
  const responseCode = (buf[0] ?? 0) & 0x7f;
  if (responseCode === 0x72 || responseCode === 0x73) {
    return {
      responseCode,
      key: buf[1]! & 0x0f,
      asc: buf[2] ?? 0,
      ascq: buf[3] ?? 0,
      filemark: false,
      eom: false,
      ili: false,
    };
  }
  const parsed: ParsedSense = {
    responseCode,
    key: (buf[2] ?? 0) & 0x0f,
    asc: buf[12] ?? 0,
    ascq: buf[13] ?? 0,
    filemark: ((buf[2] ?? 0) & 0x80) !== 0,
    eom: ((buf[2] ?? 0) & 0x40) !== 0,
    ili: ((buf[2] ?? 0) & 0x20) !== 0,
  };
  if ((buf[0]! & 0x80) !== 0 && buf.length >= 7) parsed.information = buf.readInt32BE(3);
  if (buf.length >= 18 && (buf[15]! & 0x80) !== 0 && parsed.key === SenseKey.ILLEGAL_REQUEST) {
    const b = buf[15]!;
    parsed.fieldPointer = {
      inCdb: (b & 0x40) !== 0,
      byte: buf.readUInt16BE(16),
      ...((b & 0x08) !== 0 ? { bit: b & 0x07 } : {}),
    };
  }
  return parsed;
}

/**
 * A handler throws this to end a command with CHECK CONDITION (or another status) and sense.
 * The device base catches it, so handlers read as straight-line code.
 */
export class ScsiError extends Error {
  readonly code = 'scsi_check_condition';
  readonly sense: Buffer | undefined;

  constructor(
    sense: SenseSpec | Buffer | undefined,
    readonly status: number = ScsiStatus.CHECK_CONDITION,
  ) {
    const buf = sense === undefined || Buffer.isBuffer(sense) ? sense : buildSense(sense);
    super(buf ? describeSense(parseSense(buf)) : `SCSI status 0x${status.toString(16)}`);
    this.name = 'ScsiError';
    this.sense = buf;
  }
}

export function describeSense(s: ParsedSense): string {
  const hex = (n: number) => n.toString(16).padStart(2, '0');
  return `sense key 0x${s.key.toString(16)} asc/ascq 0x${hex(s.asc)}/0x${hex(s.ascq)}`;
}

function pair(key: number, [asc, ascq]: AscPair, extra: Partial<SenseSpec> = {}): SenseSpec {
  return { key, asc, ascq, ...extra };
}

/** The sense conditions the core and most handlers raise. */
export const Sense = {
  of: pair,
  invalidOpcode: (): SenseSpec => pair(SenseKey.ILLEGAL_REQUEST, Asc.INVALID_COMMAND_OPERATION_CODE),
  /** ILLEGAL REQUEST / INVALID FIELD IN CDB with the field pointer at `byte` (and `bit`). */
  invalidFieldInCdb: (byte: number, bit?: number): SenseSpec =>
    pair(SenseKey.ILLEGAL_REQUEST, Asc.INVALID_FIELD_IN_CDB, {
      fieldPointer: { inCdb: true, byte, ...(bit !== undefined ? { bit } : {}) },
    }),
  invalidFieldInParameterList: (byte: number, bit?: number): SenseSpec =>
    pair(SenseKey.ILLEGAL_REQUEST, Asc.INVALID_FIELD_IN_PARAMETER_LIST, {
      fieldPointer: { inCdb: false, byte, ...(bit !== undefined ? { bit } : {}) },
    }),
  parameterListLengthError: (): SenseSpec => pair(SenseKey.ILLEGAL_REQUEST, Asc.PARAMETER_LIST_LENGTH_ERROR),
  lunNotSupported: (): SenseSpec => pair(SenseKey.ILLEGAL_REQUEST, Asc.LOGICAL_UNIT_NOT_SUPPORTED),
  unitAttention: (asc: AscPair): SenseSpec => pair(SenseKey.UNIT_ATTENTION, asc),
  notReady: (asc: AscPair = Asc.LUN_NOT_READY_CAUSE_NOT_REPORTABLE): SenseSpec =>
    pair(SenseKey.NOT_READY, asc),
  mediumNotPresent: (): SenseSpec => pair(SenseKey.NOT_READY, Asc.MEDIUM_NOT_PRESENT),
  internalFailure: (): SenseSpec => pair(SenseKey.HARDWARE_ERROR, Asc.INTERNAL_TARGET_FAILURE),
  noSense: (): SenseSpec => pair(SenseKey.NO_SENSE, Asc.NO_ADDITIONAL_SENSE),
} as const;
