import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import fs from 'node:fs/promises';
import { z } from 'zod';

export const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** signature.json of a bundle. */
export const BundleSignature = z.strictObject({
  alg: z.literal('ed25519'),
  /** keyId() of the public key that verifies it: tells the operator which key to trust. */
  key_id: z.string(),
  /** Base64 Ed25519 signature over signedMessage(). */
  signature: z.string(),
});
export type BundleSignature = z.infer<typeof BundleSignature>;

/**
 * What the release key signs: the digests of the manifest and of the payload, in a fixed text
 * with a domain label, so a signature of anything else can never pass for a bundle's.
 */
export function signedMessage(manifestSha256: string, payloadSha256: string): Buffer {
  return Buffer.from(`vtl-release-bundle-v1\nmanifest ${manifestSha256}\npayload ${payloadSha256}\n`);
}

/** A short, stable name of a public key: the first 16 hex digits of its SPKI's SHA-256. */
export function keyId(key: KeyObject): string {
  return sha256Hex(key.export({ type: 'spki', format: 'der' })).slice(0, 16);
}

export function signBundle(
  privateKey: KeyObject,
  manifestSha256: string,
  payloadSha256: string,
): BundleSignature {
  const publicKey = createPublicKey(privateKey);
  return {
    alg: 'ed25519',
    key_id: keyId(publicKey),
    signature: sign(null, signedMessage(manifestSha256, payloadSha256), privateKey).toString('base64'),
  };
}

/** True when one of `trusted` made `sig` over these digests. */
export function verifyBundle(
  trusted: KeyObject[],
  sig: BundleSignature,
  manifestSha256: string,
  payloadSha256: string,
): boolean {
  const message = signedMessage(manifestSha256, payloadSha256);
  const bytes = Buffer.from(sig.signature, 'base64');
  return trusted.some((key) => verify(null, message, key, bytes));
}

/**
 * The trusted release keys: every PEM `PUBLIC KEY` block in `file` (Ed25519 only). A missing
 * file trusts nothing, so every bundle is refused until the operator installs a key.
 */
export async function loadTrustedKeys(file: string): Promise<KeyObject[]> {
  const text = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  const blocks = text.match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? [];
  return blocks.map((pem) => {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== 'ed25519')
      throw new Error(`${file} holds a ${key.asymmetricKeyType} key; release keys are Ed25519`);
    return key;
  });
}
