import type { CommandContext, OpcodeEntry } from '../scsi/dispatch.js';
import { good } from '../scsi/result.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import type { ScsiResult } from '../scsi/types.js';
import { giveBlockBuffer } from '../media/block-buffers.js';
import { decryptBlock, recordInfo } from './block-crypto.js';
import {
  NextBlockStatus,
  TdePage,
  capabilitiesPage,
  inSupportPage,
  keyFormatsPage,
  managementCapabilitiesPage,
  nextBlockPage,
  outSupportPage,
  parseSetDataEncryption,
  statusPage,
} from './encryption-pages.js';
import { EncryptionScope } from './encryption-state.js';
import type { TapeDrive } from './tape-drive.js';

export const SECURITY_PROTOCOL_IN = 0xa2;
export const SECURITY_PROTOCOL_OUT = 0xb5;
/** Security protocol information (SPC-4 7.7.1) and tape data encryption (SSC-4 8.5). */
const INFORMATION = 0x00;
const TAPE_DATA_ENCRYPTION = 0x20;
/** The largest parameter list taken: a Set Data Encryption page with both KADs is 72 bytes. */
const MAX_OUT = 1024;
const INC_512 = 0x80;

function checkCdb(cdb: Buffer): void {
  if ((cdb[4]! & INC_512) !== 0) throw new ScsiError(Sense.invalidFieldInCdb(4, 7));
}

function allocated(cdb: Buffer, data: Buffer): ScsiResult {
  return good(data.subarray(0, Math.min(data.length, cdb.readUInt32BE(6))));
}

/** SECURITY PROTOCOL IN (A2h): the supported protocols, and the tape data encryption pages. */
export async function securityProtocolIn(drive: TapeDrive, ctx: CommandContext): Promise<ScsiResult> {
  const { cdb, nexus } = ctx;
  checkCdb(cdb);
  const sps = cdb.readUInt16BE(2);
  if (cdb[1] === INFORMATION) {
    if (sps === 0x0000) {
      const list = Buffer.from([0, 0, 0, 0, 0, 0, 0, 2, INFORMATION, TAPE_DATA_ENCRYPTION]);
      return allocated(cdb, list);
    }
    // No certificate: a zero-length one (SPC-4 7.7.1.3).
    if (sps === 0x0001) return allocated(cdb, Buffer.alloc(4));
    throw new ScsiError(Sense.invalidFieldInCdb(2));
  }
  if (cdb[1] !== TAPE_DATA_ENCRYPTION) throw new ScsiError(Sense.invalidFieldInCdb(1));
  switch (sps) {
    case TdePage.IN_SUPPORT:
      return allocated(cdb, inSupportPage());
    case TdePage.OUT_SUPPORT:
      return allocated(cdb, outSupportPage());
    case TdePage.CAPABILITIES: {
      const m = drive.medium;
      return allocated(cdb, capabilitiesPage(m.state === 'mounted' && m.format.gen >= 4));
    }
    case TdePage.KEY_FORMATS:
      return allocated(cdb, keyFormatsPage());
    case TdePage.MANAGEMENT_CAPABILITIES:
      return allocated(cdb, managementCapabilitiesPage());
    case TdePage.DATA_ENCRYPTION_STATUS: {
      const enc = drive.encryptionFor(nexus);
      const m = drive.medium;
      const vcelb = m.state === 'mounted' && m.cartridge?.holdsEncryptedData === true;
      return allocated(
        cdb,
        statusPage(enc.paramsFor(nexus), enc.scopeOf(nexus), enc.keyInstanceCounter, vcelb),
      );
    }
    case TdePage.NEXT_BLOCK_STATUS:
      return allocated(cdb, await nextBlockStatus(drive, nexus));
    default:
      throw new ScsiError(Sense.invalidFieldInCdb(2));
  }
}

/** Reads the next object without moving: whether it is encrypted and whether this key opens it. */
async function nextBlockStatus(drive: TapeDrive, nexus: string): Promise<Buffer> {
  const m = drive.requireMounted();
  const at = m.tape.position();
  const r = await m.tape
    .readBlock(drive.personality.maxBlockLength)
    .catch((err: unknown) => drive.readFailed(err));
  if (r.kind === 'eod') return nextBlockPage(at.object, NextBlockStatus.UNABLE_TO_DETERMINE);
  await m.tape.locate(at.object);
  if (r.kind === 'filemark') return nextBlockPage(at.object, NextBlockStatus.UNABLE_TO_DETERMINE);
  try {
    if (!r.encrypted) return nextBlockPage(at.object, NextBlockStatus.NOT_ENCRYPTED);
    const info = recordInfo(r.data) ?? { ukad: undefined, akad: undefined };
    const key = drive.encryptionFor(nexus).paramsFor(nexus)?.key;
    const opens = key !== undefined && decryptBlock(key, r.data) !== undefined;
    const status = opens ? NextBlockStatus.ENCRYPTED_CAN_DECRYPT : NextBlockStatus.ENCRYPTED_NO_KEY;
    return nextBlockPage(at.object, status, { ukad: info.ukad, akad: info.akad });
  } finally {
    giveBlockBuffer(r.data);
  }
}

/** Data-out of SECURITY PROTOCOL OUT: its TRANSFER LENGTH, up to what a page can need. */
export function securityProtocolOutDataOutLength(cdb: Buffer): number {
  return Math.min(cdb.readUInt32BE(6), MAX_OUT);
}

/**
 * SECURITY PROTOCOL OUT (B5h) with the Set Data Encryption page: sets, changes or clears the
 * data encryption parameters. The key stays in the drive's memory; nothing of it is logged.
 */
export function securityProtocolOut(drive: TapeDrive, ctx: CommandContext): ScsiResult {
  const { cdb, nexus } = ctx;
  checkCdb(cdb);
  if (cdb[1] !== TAPE_DATA_ENCRYPTION) throw new ScsiError(Sense.invalidFieldInCdb(1));
  if (cdb.readUInt16BE(2) !== TdePage.SET_DATA_ENCRYPTION) throw new ScsiError(Sense.invalidFieldInCdb(2));
  const length = cdb.readUInt32BE(6);
  if (length > MAX_OUT) throw new ScsiError(Sense.invalidFieldInCdb(6));
  const data = (ctx.cmd.dataOut ?? Buffer.alloc(0)).subarray(0, length);
  const page = parseSetDataEncryption(data);
  const { params } = page;
  if (params?.ckorl && !drive.holdsReservation(nexus).reserved) {
    throw new ScsiError(Sense.invalidFieldInParameterList(5, 0));
  }
  if (params?.ckorp && !drive.holdsReservation(nexus).registered) {
    throw new ScsiError(Sense.invalidFieldInParameterList(5, 1));
  }
  drive.encryptionFor(nexus).set(nexus, page.scope, page.lock, params);
  drive.noteEncryptionSet({
    scope: Object.keys(EncryptionScope)[page.scope] ?? String(page.scope),
    encrypt: params?.encrypt ?? 'shared',
    decrypt: params?.decrypt ?? 'shared',
  });
  return good();
}

/** The rows installed on drives of LTO-4 and later, which have encryption. */
export function securityProtocolRows(drive: TapeDrive): Array<[number, OpcodeEntry]> {
  const quick = { nominal: 1, recommended: 60 };
  return [
    [
      SECURITY_PROTOCOL_IN,
      {
        name: 'SECURITY PROTOCOL IN',
        handler: (c) => securityProtocolIn(drive, c),
        readOnly: true,
        timeouts: quick,
      },
    ],
    [
      SECURITY_PROTOCOL_OUT,
      {
        name: 'SECURITY PROTOCOL OUT',
        handler: (c) => securityProtocolOut(drive, c),
        dataOutLength: securityProtocolOutDataOutLength,
        timeouts: quick,
      },
    ],
  ];
}
