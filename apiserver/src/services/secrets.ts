import { createHash, randomBytes, randomInt, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashing (scrypt, salted, parameters stored with the hash so they can be raised
 * later) and bearer-token minting. Tokens carry a kind prefix so one lookup finds them, and are
 * stored only as their SHA-256: 32 random bytes need no slow hash to resist guessing.
 */
const SCRYPT = { N: 16_384, r: 8, p: 1, keylen: 64 };
const SESSION_PREFIX = 'vtls_';
const APIKEY_PREFIX = 'vtlk_';

function scryptAsync(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$<salt>$<hash>`, base64url parts. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keylen } = SCRYPT;
  const hash = await scryptAsync(password, salt, keylen, { N, r, p });
  return ['scrypt', N, r, p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/** A password for the first admin: 24 characters from an alphabet without look-alikes. */
export function randomPassword(): string {
  const alphabet = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return Array.from({ length: 24 }, () => alphabet[randomInt(alphabet.length)]).join('');
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

export const newSessionToken = () => SESSION_PREFIX + randomBytes(32).toString('base64url');
export const newApiKey = (id: number) => `${APIKEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}`;

/** What a bearer token claims to be, from its prefix; the store says whether it is real. */
export type TokenClaim = { kind: 'session'; hash: string } | { kind: 'apikey'; id: number; hash: string };

export function classifyToken(token: string): TokenClaim | undefined {
  if (token.startsWith(SESSION_PREFIX)) return { kind: 'session', hash: sha256(token) };
  const m = /^vtlk_([1-9]\d{0,8})_[A-Za-z0-9_-]{43}$/.exec(token);
  if (m) return { kind: 'apikey', id: Number(m[1]), hash: sha256(token) };
  return undefined;
}
