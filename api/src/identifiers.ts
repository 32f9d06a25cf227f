import { randomInt } from 'node:crypto';

/**
 * Cartridge barcode: six A-Z0-9 characters plus an LTO media identifier: L1..L9, LA (LTO-10)
 * or a WORM one, LT..LZ (models.ts parseMediaSuffix says which generation each names).
 */
export const CARTRIDGE_LABEL = /^[A-Z0-9]{6}L[1-9AT-Z]$/;
export const LABEL_PREFIX = /^[A-Z0-9]{3}$/;
/** setting system.name and bucket key segment. */
export const SYSTEM_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/** Accepts `naa.`-prefixed, colon-separated, or bare 16 hex digits; returns `naa.<16 lower hex>`. */
export function normalizeWwpn(input: string): string | undefined {
  let s = input.trim().toLowerCase();
  if (s.startsWith('naa.')) s = s.slice(4);
  else if (s.includes(':')) {
    const parts = s.split(':');
    if (parts.length !== 8 || parts.some((p) => !/^[0-9a-f]{2}$/.test(p))) return undefined;
    s = parts.join('');
  }
  return /^[0-9a-f]{16}$/.test(s) ? `naa.${s}` : undefined;
}

const ALNUM = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';

/** A random serial of `length` characters after `prefix`, upper-case letters and digits. */
export function randomSerial(prefix: string, length: number): string {
  let s = prefix;
  while (s.length < prefix.length + length) s += ALNUM[randomInt(ALNUM.length)];
  return s;
}

/** A drive serial: ten decimal digits, as IBM LTO drives report them. */
export function randomDriveSerial(): string {
  let s = String(randomInt(1, 10));
  while (s.length < 10) s += String(randomInt(10));
  return s;
}

/** `<prefix><NNN><suffix>` for sequence number n (0..999). */
export function formatLabel(prefix: string, n: number, suffix: string): string {
  return `${prefix}${String(n).padStart(3, '0')}${suffix}`;
}

/** ISO 8601 UTC timestamp without milliseconds, as the spec's `<timestamp>` fields. */
export function isoNow(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
