import { giveBlockBuffer } from '../media/block-buffers.js';
import type { BlockOptions, ReadResult } from '../media/cartridge.js';
import { SenseKey } from '../scsi/constants.js';
import { Sense, ScsiError } from '../scsi/sense.js';
import { decryptBlock, encryptBlock } from './block-crypto.js';
import type { MountedTape, TapeDrive } from './tape-drive.js';

/** DATA PROTECT additional sense codes of decryption (SPC-4 74h/xx), as LTO drives report them. */
const UNABLE_TO_DECRYPT = [0x74, 0x01] as const;
const UNENCRYPTED_DATA_WHILE_DECRYPTING = [0x74, 0x02] as const;
const INCORRECT_KEY = [0x74, 0x03] as const;

const dataProtect = (asc: readonly [number, number]) => new ScsiError(Sense.of(SenseKey.DATA_PROTECT, asc));

/**
 * A block as the nexus's data encryption parameters store it: encrypted under the key when
 * ENCRYPTION MODE is ENCRYPT, as sent otherwise. The first encrypted block marks the cartridge
 * as holding encrypted data (the status page's VCELB), which it keeps until it is formatted.
 */
export async function blockToStore(
  drive: TapeDrive,
  m: MountedTape,
  nexus: string,
  block: Buffer,
): Promise<{ data: Buffer; opts: BlockOptions }> {
  const params = drive.encryptionFor(nexus).paramsFor(nexus);
  if (!params?.encrypt || !params.key) return { data: block, opts: {} };
  if (m.cartridge && !m.cartridge.holdsEncryptedData) await m.cartridge.markEncryptedData();
  return { data: encryptBlock(params.key, block, params), opts: { encrypted: true } };
}

/**
 * Reads the next object as the host sees it through the drive's decryption: an encrypted block
 * decrypts with the nexus's key (cut to maxLen like any block); without decryption on it is
 * UNABLE TO DECRYPT DATA, under another key INCORRECT DATA ENCRYPTION KEY, and a clear block
 * in DECRYPT (not MIXED) mode UNENCRYPTED DATA ENCOUNTERED WHILE DECRYPTING. Either way the
 * tape is past the block, as after any read error.
 */
export async function readHostBlock(
  drive: TapeDrive,
  m: MountedTape,
  nexus: string,
  maxLen: number,
): Promise<ReadResult> {
  const r = await m.tape.readBlock(maxLen).catch((err: unknown) => drive.readFailed(err));
  if (r.kind !== 'data') return r;
  const params = drive.encryptionFor(nexus).paramsFor(nexus);
  if (!r.encrypted) {
    if (params?.decrypt === 'on') {
      giveBlockBuffer(r.data);
      throw dataProtect(UNENCRYPTED_DATA_WHILE_DECRYPTING);
    }
    return r;
  }
  const record = r.data;
  try {
    if (!params?.key || params.decrypt === 'off') throw dataProtect(UNABLE_TO_DECRYPT);
    const plain = decryptBlock(params.key, record);
    if (!plain) throw dataProtect(INCORRECT_KEY);
    return {
      kind: 'data',
      data: plain.length > maxLen ? plain.subarray(0, maxLen) : plain,
      length: plain.length,
    };
  } finally {
    giveBlockBuffer(record);
  }
}
