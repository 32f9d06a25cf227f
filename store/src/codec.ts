import { VtlError } from '@vtl/api';
import type { IKeyValue } from 'etcd3';
import type { Logger } from 'pino';
import type { z } from 'zod';

/** A record as read from etcd, with the revisions a compare-and-swap needs. */
export interface Versioned<T> {
  key: string;
  value: T;
  modRevision: string;
  createRevision: string;
}

/** Serialises a value for etcd; every record is JSON. */
export function encode(value: unknown): string {
  const text = JSON.stringify(value);
  // JSON.stringify(undefined) is undefined: refuse instead of storing the string "undefined".
  if (text === undefined) throw new VtlError('internal', 'Cannot store an undefined value.');
  return text;
}

/** Parses and validates one key-value; throws a VtlError('internal') naming the key on bad data. */
export function decodeKv<T>(kv: IKeyValue, schema: z.ZodType<T>): Versioned<T> {
  const key = kv.key.toString();
  let raw: unknown;
  try {
    raw = JSON.parse(kv.value.toString());
  } catch (err) {
    throw new VtlError('internal', `Record ${key} is not valid JSON.`, { key, cause: String(err) });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new VtlError('internal', `Record ${key} does not match its schema.`, {
      key,
      issues: parsed.error.issues,
    });
  }
  return { key, value: parsed.data, modRevision: kv.mod_revision, createRevision: kv.create_revision };
}

/** Like decodeKv, but logs and returns undefined so one bad record does not hide the others. */
export function decodeKvOrSkip<T>(
  kv: IKeyValue,
  schema: z.ZodType<T>,
  log: Logger,
): Versioned<T> | undefined {
  try {
    return decodeKv(kv, schema);
  } catch (err) {
    const details = err instanceof VtlError ? err.details : undefined;
    log.warn({ key: kv.key.toString(), ...details }, 'skipping a record that fails its schema');
    return undefined;
  }
}

/** Parses a JSON value without a schema (watch events); undefined when it is not JSON. */
export function decodeRaw(buf: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(buf.toString()) };
  } catch {
    return { ok: false };
  }
}

/** `rev + n` for etcd's int64 revisions, which arrive as decimal strings. */
export function addRevision(rev: string, n: number): string {
  return (BigInt(rev) + BigInt(n)).toString();
}
