import { spacePadded } from './cdb.js';

/** What a logical unit says about itself in INQUIRY and the identification VPD pages. */
export interface DeviceIdentity {
  vendor: string;
  product: string;
  revision: string;
  /** Unit serial number (VPD 0x80) and the tail of the T10 vendor ID designator. */
  serial: string;
  /** NAA designator as hex (16 or 32 digits, e.g. `5000e11100000001`), the LU's WWN. */
  naa?: string;
  /** RMB bit: tape drives and most libraries report removable media. */
  removable?: boolean;
  /** SPC version byte: 0x05 SPC-3 (default), 0x06 SPC-4. */
  version?: number;
  /** CmdQue bit: whether the device accepts more than one task at a time. */
  commandQueuing?: boolean;
  /** Up to eight version descriptors (SAM/SPC/SSC/SMC/transport codes). */
  versionDescriptors?: readonly number[];
  /** Bytes 36-55 of standard INQUIRY data (IBM drives put firmware details here). */
  vendorSpecific?: Buffer;
  /** Extra designators appended to VPD 0x83, already encoded. */
  extraDesignators?: readonly Buffer[];
}

export const STANDARD_INQUIRY_LENGTH = 96;

/** Standard INQUIRY data (SPC-4 6.6.2). */
export function standardInquiry(peripheralType: number, id: DeviceIdentity): Buffer {
  const out = Buffer.alloc(STANDARD_INQUIRY_LENGTH);
  out[0] = peripheralType & 0x1f;
  out[1] = id.removable ? 0x80 : 0;
  out[2] = id.version ?? 0x05;
  // HiSup set, response data format 2: the only format SPC-3 and later allow.
  out[3] = 0x12;
  out[4] = STANDARD_INQUIRY_LENGTH - 5;
  out[7] = id.commandQueuing ? 0x02 : 0;
  spacePadded(id.vendor, 8).copy(out, 8);
  spacePadded(id.product, 16).copy(out, 16);
  spacePadded(id.revision, 4).copy(out, 32);
  id.vendorSpecific?.subarray(0, 20).copy(out, 36);
  (id.versionDescriptors ?? []).slice(0, 8).forEach((d, i) => out.writeUInt16BE(d, 58 + 2 * i));
  return out;
}

/** INQUIRY data for a LUN nobody is mapped to: qualifier 011b, type 1Fh (SPC-4 6.6.2). */
export function absentLunInquiry(): Buffer {
  const out = Buffer.alloc(36);
  out[0] = 0x7f;
  out[3] = 0x12;
  out[4] = 31;
  return out;
}

/** Wraps a VPD page payload in its 4-byte header. */
export function vpdPage(peripheralType: number, page: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header[0] = peripheralType & 0x1f;
  header[1] = page;
  header.writeUInt16BE(payload.length, 2);
  return Buffer.concat([header, payload]);
}

export function unitSerialNumberPayload(id: DeviceIdentity): Buffer {
  return Buffer.from(id.serial, 'ascii');
}

/** Code sets and designator types of VPD 0x83 (SPC-4 7.8.6). */
export const Designator = {
  CODE_SET_BINARY: 1,
  CODE_SET_ASCII: 2,
  CODE_SET_UTF8: 3,
  TYPE_T10_VENDOR_ID: 1,
  TYPE_NAA: 3,
  TYPE_RELATIVE_TARGET_PORT: 4,
  TYPE_SCSI_NAME_STRING: 8,
  ASSOCIATION_LU: 0,
  ASSOCIATION_TARGET_PORT: 1,
  ASSOCIATION_TARGET_DEVICE: 2,
  PROTOCOL_ISCSI: 5,
} as const;

/** Encodes one identification descriptor. */
export function designator(
  codeSet: number,
  type: number,
  value: Buffer,
  opts: { association?: number; protocol?: number } = {},
): Buffer {
  const head = Buffer.alloc(4);
  const piv = opts.protocol !== undefined;
  head[0] = ((opts.protocol ?? 0) << 4) | codeSet;
  head[1] = (piv ? 0x80 : 0) | ((opts.association ?? 0) << 4) | type;
  head[3] = value.length;
  return Buffer.concat([head, value]);
}

export function deviceIdentificationPayload(id: DeviceIdentity): Buffer {
  const parts: Buffer[] = [];
  if (id.naa) {
    const naa = Buffer.from(id.naa.replace(/^naa\./i, ''), 'hex');
    parts.push(designator(Designator.CODE_SET_BINARY, Designator.TYPE_NAA, naa));
  }
  const t10 = Buffer.concat([spacePadded(id.vendor, 8), spacePadded(id.product, 16), Buffer.from(id.serial)]);
  parts.push(designator(Designator.CODE_SET_ASCII, Designator.TYPE_T10_VENDOR_ID, t10));
  parts.push(...(id.extraDesignators ?? []));
  return Buffer.concat(parts);
}
