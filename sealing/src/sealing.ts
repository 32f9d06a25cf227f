import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync, type Stats } from 'node:fs';
import path from 'node:path';
import { ROOT, VtlError } from '@vtl/api/base';

/**
 * Secrets sealed at rest, as Kubernetes' aesgcm encryption provider does: every record under
 * SECRETS_PREFIX is stored as an AES-256-GCM envelope under a key kept outside the store.
 * The Store seals on write and opens on read, so callers only ever see plaintext.
 */
export const SECRETS_PREFIX = `${ROOT}secrets/`;

/** What the store holds for a sealed record instead of its JSON. */
export interface SealedEnvelope {
  sealed: 'v1';
  /** Which key of the key file sealed it. */
  kid: string;
  /** 12 random bytes, base64; a new one per write. */
  nonce: string;
  /** Ciphertext followed by the 16-byte GCM tag, base64. */
  data: string;
}

/** One key of the key file. */
export interface SealingKey {
  kid: string;
  key: Buffer;
}

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KID = /^[A-Za-z0-9_-]{1,64}$/;

export const isSecretKey = (key: string): boolean => key.startsWith(SECRETS_PREFIX);

export function isEnvelope(value: unknown): value is SealedEnvelope {
  const v = value as Partial<SealedEnvelope> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.sealed === 'v1' &&
    typeof v.kid === 'string' &&
    typeof v.nonce === 'string' &&
    typeof v.data === 'string'
  );
}

/** A new key with a random id (`k` + 8 hex digits). */
export function newSealingKey(): SealingKey {
  return { kid: `k${randomBytes(4).toString('hex')}`, key: randomBytes(KEY_BYTES) };
}

/**
 * The key file: one key a line, `<kid> <base64 of 32 bytes>`; the first line seals, every line
 * opens (old keys stay until a rotation has re-sealed everything). `#` starts a comment.
 */
export function parseKeyFile(text: string, file: string): SealingKey[] {
  const keys: SealingKey[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const [kid, b64, extra] = line.split(/\s+/);
    const key = Buffer.from(b64 ?? '', 'base64');
    if (!kid || !KID.test(kid) || key.length !== KEY_BYTES || extra !== undefined) {
      throw new VtlError(
        'internal',
        `Sealing key file ${file}, line ${i + 1}: expected "<key id> <base64 of 32 bytes>". Restore the file from your backup.`,
      );
    }
    keys.push({ kid, key });
  }
  if (keys.length === 0)
    throw new VtlError('internal', `Sealing key file ${file} holds no key. Restore it from your backup.`);
  return keys;
}

export function formatKeyFile(keys: SealingKey[]): string {
  const lines = keys.map((k) => `${k.kid} ${k.key.toString('base64')}`);
  return `# VTL sealing keys: the first seals, all open. Keep a copy apart from the store's backups.\n${lines.join('\n')}\n`;
}

/** Writes the key file atomically (temp file + rename), 0600 in a 0700 directory. */
export function writeKeyFile(file: string, keys: SealingKey[]): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, formatKeyFile(keys), { mode: 0o600 });
  renameSync(tmp, file);
}

/** Creates the key file with one new key unless it exists; true when it was created. */
export function ensureSealingKeyFile(file: string): boolean {
  try {
    statSync(file);
    return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  writeKeyFile(file, [newSealingKey()]);
  return true;
}

/**
 * Seals and opens secret records with the keys of a key file. The file is re-read whenever it
 * changes on disk, so a rotation reaches every running process without a restart.
 */
export class Sealer {
  private keys: SealingKey[] | undefined;
  private loadedFrom: Stats | undefined;

  constructor(readonly file: string) {}

  /** The key that seals new writes. */
  get primary(): SealingKey {
    return this.current()[0]!;
  }

  /** Every key id of the file, the sealing one first. */
  kids(): string[] {
    return this.current().map((k) => k.kid);
  }

  /** The envelope's JSON for a record's JSON text; the record key is authenticated with it. */
  seal(recordKey: string, plaintext: string): string {
    const { kid, key } = this.primary;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    // The record key as additional data: a sealed value copied under another key will not open.
    cipher.setAAD(Buffer.from(recordKey));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    const envelope: SealedEnvelope = {
      sealed: 'v1',
      kid,
      nonce: nonce.toString('base64'),
      data: data.toString('base64'),
    };
    return JSON.stringify(envelope);
  }

  /** The record's JSON text from its envelope. */
  open(recordKey: string, envelope: SealedEnvelope): string {
    const found = this.current().find((k) => k.kid === envelope.kid);
    if (!found) {
      throw new VtlError(
        'internal',
        `Secret ${recordKey} was sealed with key "${envelope.kid}", which the sealing key file ${this.file} does not hold (it has ${this.kids().join(', ')}). ` +
          'Put the key file that holds it back in place (from your backup, or the one of the other processes), or set VTL_SEALING_KEY_FILE to it.',
        { key: recordKey, kid: envelope.kid },
      );
    }
    const raw = Buffer.from(envelope.data, 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', found.key, Buffer.from(envelope.nonce, 'base64'));
      decipher.setAAD(Buffer.from(recordKey));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(raw.subarray(0, raw.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new VtlError(
        'internal',
        `Secret ${recordKey} does not open with key "${envelope.kid}" of ${this.file}: the key file holds a different key under that id, or the record was altered. Restore the key file from your backup.`,
        { key: recordKey, kid: envelope.kid },
      );
    }
  }

  /** The keys, re-read when the file changed (a cheap stat; secrets are rare). */
  private current(): SealingKey[] {
    let st: Stats;
    try {
      st = statSync(this.file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new VtlError(
        'internal',
        `The sealing key file ${this.file} cannot be read (${code}): secrets under ${SECRETS_PREFIX} can be neither sealed nor opened. ` +
          'Put the key file back from your backup, or set VTL_SEALING_KEY_FILE to where it is. Do not create a new one while sealed secrets exist: they would stay unreadable.',
        { file: this.file, code },
      );
    }
    const prev = this.loadedFrom;
    if (!this.keys || !prev || prev.ino !== st.ino || prev.mtimeMs !== st.mtimeMs || prev.size !== st.size) {
      let text: string;
      try {
        text = readFileSync(this.file, 'utf8');
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        throw new VtlError(
          'internal',
          `The sealing key file ${this.file} cannot be read (${code}). Run the processes as the user that owns it (it is 0600).`,
          { file: this.file, code },
        );
      }
      this.keys = parseKeyFile(text, this.file);
      this.loadedFrom = st;
    }
    return this.keys;
  }
}

/** Seals and opens the records of the store transparently; no sealer means secrets are refused. */
export class RecordSealing {
  constructor(private readonly sealer: Sealer | undefined) {}

  /** The bytes to store for a record's JSON text. */
  encode(recordKey: string, json: string): string {
    if (!isSecretKey(recordKey)) return json;
    return this.need(recordKey).seal(recordKey, json);
  }

  /** A record's JSON text from the stored bytes; plaintext written before sealing passes through. */
  decode(recordKey: string, stored: Buffer): Buffer {
    if (!isSecretKey(recordKey)) return stored;
    let parsed: unknown;
    try {
      parsed = JSON.parse(stored.toString());
    } catch {
      return stored;
    }
    if (!isEnvelope(parsed)) return stored;
    return Buffer.from(this.need(recordKey).open(recordKey, parsed));
  }

  /** A parsed value (watch events) opened when it is an envelope. */
  decodeParsed(recordKey: string, value: unknown): unknown {
    if (!isSecretKey(recordKey) || !isEnvelope(value)) return value;
    return JSON.parse(this.need(recordKey).open(recordKey, value));
  }

  private need(recordKey: string): Sealer {
    if (this.sealer) return this.sealer;
    throw new VtlError(
      'internal',
      `Secret ${recordKey} needs the sealing key, and this process has none: set VTL_SEALING_KEY_FILE (default $VTL_STATE_DIR/pki/sealing.key).`,
      { key: recordKey },
    );
  }
}
