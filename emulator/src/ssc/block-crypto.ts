import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * How a block written under a data encryption key lies on the medium: AES-256-GCM, a fresh
 * 96-bit nonce per block, and the key-associated data (U-KAD, A-KAD) beside it in the clear, as
 * an LTO drive records them with each block so a host can tell which key a tape needs (next
 * block encryption status). The KAD and header are authenticated, so a changed label is found.
 *
 * record: u8 version | u8 U-KAD length | u8 A-KAD length | u8 0 | nonce(12) | U-KAD | A-KAD |
 *         ciphertext | tag(16)
 *
 * The index marks such records (index-file.ts flag), so a clear block that happens to look like
 * one is never taken for it. The key itself is never part of the record.
 */
const VERSION = 1;
const HEADER = 4;
const NONCE = 12;
const TAG = 16;
export const KEY_BYTES = 32;

/** Key-associated data recorded with each block: a label for the key, never the key. */
export interface BlockKad {
  ukad?: Buffer;
  akad?: Buffer;
}

export function encryptBlock(key: Buffer, block: Buffer, kad: BlockKad = {}): Buffer {
  const ukad = kad.ukad ?? Buffer.alloc(0);
  const akad = kad.akad ?? Buffer.alloc(0);
  const head = Buffer.alloc(HEADER + NONCE);
  head[0] = VERSION;
  head[1] = ukad.length;
  head[2] = akad.length;
  randomBytes(NONCE).copy(head, HEADER);
  const aad = Buffer.concat([head, ukad, akad]);
  const cipher = createCipheriv('aes-256-gcm', key, head.subarray(HEADER), { authTagLength: TAG });
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(block), cipher.final()]);
  return Buffer.concat([aad, body, cipher.getAuthTag()]);
}

export interface RecordInfo extends Required<BlockKad> {
  /** Length of the host's block inside. */
  plainLength: number;
}

/** What the record says about itself without the key; undefined when it is not one. */
export function recordInfo(record: Buffer): RecordInfo | undefined {
  if (record.length < HEADER + NONCE + TAG || record[0] !== VERSION) return undefined;
  const u = record[1]!;
  const a = record[2]!;
  const start = HEADER + NONCE + u + a;
  if (record.length < start + TAG) return undefined;
  return {
    ukad: record.subarray(HEADER + NONCE, HEADER + NONCE + u),
    akad: record.subarray(HEADER + NONCE + u, start),
    plainLength: record.length - start - TAG,
  };
}

/** The host's block, or undefined when the key is not the one it was written with. */
export function decryptBlock(key: Buffer, record: Buffer): Buffer | undefined {
  const info = recordInfo(record);
  if (!info) return undefined;
  const start = record.length - TAG - info.plainLength;
  const decipher = createDecipheriv('aes-256-gcm', key, record.subarray(HEADER, HEADER + NONCE), {
    authTagLength: TAG,
  });
  decipher.setAAD(record.subarray(0, start));
  decipher.setAuthTag(record.subarray(record.length - TAG));
  try {
    return Buffer.concat([decipher.update(record.subarray(start, record.length - TAG)), decipher.final()]);
  } catch {
    return undefined;
  }
}
