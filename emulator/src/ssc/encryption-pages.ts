import { Sense, ScsiError } from '../scsi/sense.js';
import { KEY_BYTES, type BlockKad } from './block-crypto.js';
import { EncryptionScope, type DecryptMode, type EncryptionParams } from './encryption-state.js';

/**
 * The tape data encryption pages of security protocol 20h (SSC-4 8.5), laid out as IBM LTO
 * drives (LTO-4 and later) report them: one algorithm, AES-256-GCM (security algorithm code
 * 00010014h), application-managed keys in plaintext key format, U-KAD up to 32 bytes and A-KAD
 * up to 12, every scope and clearing option of the management capabilities page.
 */
export const TdePage = {
  IN_SUPPORT: 0x0000,
  OUT_SUPPORT: 0x0001,
  CAPABILITIES: 0x0010,
  KEY_FORMATS: 0x0011,
  MANAGEMENT_CAPABILITIES: 0x0012,
  DATA_ENCRYPTION_STATUS: 0x0020,
  NEXT_BLOCK_STATUS: 0x0021,
  SET_DATA_ENCRYPTION: 0x0010,
} as const;

export const IN_PAGES = [0x0000, 0x0001, 0x0010, 0x0011, 0x0012, 0x0020, 0x0021];
export const OUT_PAGES = [0x0010];

export const ALGORITHM_INDEX = 1;
const AES_256_GCM_128 = 0x00010014;
const MAX_UKAD = 32;
const MAX_AKAD = 12;
const KAD_UKAD = 0x00;
const KAD_AKAD = 0x01;
const ENCRYPT = 0x02;
const DECRYPT_MODES: Record<number, DecryptMode | undefined> = { 0: 'off', 2: 'on', 3: 'mixed' };

function page(code: number, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(code, 0);
  head.writeUInt16BE(body.length, 2);
  return Buffer.concat([head, body]);
}

function codeList(code: number, codes: readonly number[]): Buffer {
  const body = Buffer.alloc(codes.length * 2);
  codes.forEach((c, i) => body.writeUInt16BE(c, i * 2));
  return page(code, body);
}

export const inSupportPage = () => codeList(TdePage.IN_SUPPORT, IN_PAGES);
export const outSupportPage = () => codeList(TdePage.OUT_SUPPORT, OUT_PAGES);

/** Data Encryption Capabilities: `mountedCapable` is AVFMV (the medium in the drive takes it). */
export function capabilitiesPage(mountedCapable: boolean): Buffer {
  const body = Buffer.alloc(40);
  body[0] = 0x01; // CFG_P 01b: the application client may configure encryption
  const d = body.subarray(16);
  d[0] = ALGORITHM_INDEX;
  d.writeUInt16BE(0x14, 2);
  // AVFMV, MAC_C, DELB_C (distinguishes encrypted blocks), DECRYPT_C and ENCRYPT_C 10b (hardware)
  d[4] = (mountedCapable ? 0x80 : 0) | 0x20 | 0x10 | 0x08 | 0x02;
  d[5] = 0x10 | 0x04; // NONCE_C 01b (the drive makes the nonce), VCELB_C
  d.writeUInt16BE(MAX_UKAD, 6);
  d.writeUInt16BE(MAX_AKAD, 8);
  d.writeUInt16BE(KEY_BYTES, 10);
  d[12] = 0x01; // EAREM: the encryption mode is recorded with each block
  d.writeUInt32BE(AES_256_GCM_128, 20);
  return page(TdePage.CAPABILITIES, body);
}

/** Only plaintext keys (key format 00h). */
export const keyFormatsPage = () => page(TdePage.KEY_FORMATS, Buffer.from([0x00]));

/** LOCK_C; CKOD_C, CKORP_C, CKORL_C; AITN_C, LOCAL_C, PUBLIC_C. */
export const managementCapabilitiesPage = () =>
  page(TdePage.MANAGEMENT_CAPABILITIES, Buffer.from([0x01, 0x07, 0x00, 0x07, 0, 0, 0, 0]));

function kadDescriptors(kad: BlockKad): Buffer {
  const parts: Buffer[] = [];
  for (const [type, data] of [
    [KAD_UKAD, kad.ukad],
    [KAD_AKAD, kad.akad],
  ] as const) {
    if (!data || data.length === 0) continue;
    const head = Buffer.alloc(4);
    head[0] = type;
    head[1] = type === KAD_AKAD ? 0x01 : 0x00; // AUTHENTICATED: the A-KAD is
    head.writeUInt16BE(data.length, 2);
    parts.push(head, data);
  }
  return Buffer.concat(parts);
}

/** Data Encryption Status for one nexus; `vcelb`: the mounted volume holds encrypted blocks. */
export function statusPage(
  params: EncryptionParams | undefined,
  nexusScope: number,
  keyInstanceCounter: number,
  vcelb: boolean,
): Buffer {
  const fixed = Buffer.alloc(20);
  fixed[0] = ((nexusScope & 0x07) << 5) | (params?.key ? params.scope : 0);
  fixed[1] = params?.encrypt ? ENCRYPT : 0;
  fixed[2] = params ? { off: 0, on: 2, mixed: 3 }[params.decrypt] : 0;
  fixed[3] = params && (params.encrypt || params.decrypt !== 'off') ? ALGORITHM_INDEX : 0;
  fixed.writeUInt32BE(keyInstanceCounter, 4);
  fixed[8] = vcelb ? 0x08 : 0;
  const kads = params ? kadDescriptors(params) : Buffer.alloc(0);
  return page(TdePage.DATA_ENCRYPTION_STATUS, Buffer.concat([fixed, kads]));
}

/** ENCRYPTION STATUS of the next block (SSC-4 table "encryption status field"). */
export const NextBlockStatus = {
  UNABLE_TO_DETERMINE: 1,
  NOT_ENCRYPTED: 3,
  ENCRYPTED_CAN_DECRYPT: 5,
  ENCRYPTED_NO_KEY: 6,
} as const;

export function nextBlockPage(object: number, status: number, kad: BlockKad = {}): Buffer {
  const fixed = Buffer.alloc(12);
  fixed.writeBigUInt64BE(BigInt(object), 0);
  fixed[8] = status & 0x0f;
  fixed[9] = status >= NextBlockStatus.ENCRYPTED_CAN_DECRYPT ? ALGORITHM_INDEX : 0;
  return page(TdePage.NEXT_BLOCK_STATUS, Buffer.concat([fixed, kadDescriptors(kad)]));
}

/** A parsed Set Data Encryption page. */
export interface SetDataEncryption {
  scope: number;
  lock: boolean;
  params?: Omit<EncryptionParams, 'owner' | 'instance' | 'scope'>;
}

const bad = (byte: number, bit?: number) => new ScsiError(Sense.invalidFieldInParameterList(byte, bit));

/**
 * Reads a Set Data Encryption page (SSC-4 8.5.3.2). Every field this drive does not offer is
 * refused with its field pointer: EXTERNAL encryption, RAW decryption, an algorithm other than 1,
 * a key format other than plaintext, a key not 256 bits, supplemental keys, KAD it cannot hold.
 */
export function parseSetDataEncryption(d: Buffer): SetDataEncryption {
  if (d.length < 20) throw new ScsiError(Sense.parameterListLengthError());
  if (d.readUInt16BE(0) !== TdePage.SET_DATA_ENCRYPTION) throw bad(0);
  const end = 4 + d.readUInt16BE(2);
  if (end > d.length || end < 20) throw new ScsiError(Sense.parameterListLengthError());
  const scope = d[4]! >> 5;
  const lock = (d[4]! & 0x01) !== 0;
  if (scope > EncryptionScope.ALL_I_T_NEXUS) throw bad(4, 7);
  if (scope === EncryptionScope.PUBLIC) return { scope, lock };
  // CEEM (byte 5 bits 7-6) is ignored: with no EXTERNAL mode there is nothing to check.
  const flags = d[5]!;
  if ((flags & 0x08) !== 0) throw bad(5, 3); // SDK
  const encMode = d[6]!;
  if (encMode !== 0 && encMode !== ENCRYPT) throw bad(6);
  const decrypt = DECRYPT_MODES[d[7]!];
  if (!decrypt) throw bad(7);
  const on = encMode === ENCRYPT || decrypt !== 'off';
  if (on && d[8] !== ALGORITHM_INDEX) throw bad(8);
  if (d[9] !== 0) throw bad(9);
  // With both modes off the key fields are ignored (stenc sends a zeroed 256-bit one).
  const keyLength = d.readUInt16BE(18);
  if ((on && keyLength !== KEY_BYTES) || 20 + keyLength > end) throw bad(18);
  const key = on ? Buffer.from(d.subarray(20, 20 + keyLength)) : undefined;
  const kad: BlockKad = {};
  for (let at = 20 + keyLength; at < end;) {
    if (at + 4 > end) throw bad(at);
    const type = d[at]!;
    const length = d.readUInt16BE(at + 2);
    if (at + 4 + length > end) throw bad(at + 2);
    const data = Buffer.from(d.subarray(at + 4, at + 4 + length));
    if (encMode !== ENCRYPT) throw bad(at);
    if (type === KAD_UKAD && length <= MAX_UKAD && !kad.ukad) kad.ukad = data;
    else if (type === KAD_AKAD && length <= MAX_AKAD && !kad.akad) kad.akad = data;
    else throw bad(at);
    at += 4 + length;
  }
  return {
    scope,
    lock,
    params: {
      encrypt: encMode === ENCRYPT,
      decrypt,
      ...(key ? { key } : {}),
      ...kad,
      ckod: (flags & 0x04) !== 0,
      ckorp: (flags & 0x02) !== 0,
      ckorl: (flags & 0x01) !== 0,
    },
  };
}
