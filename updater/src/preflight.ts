import fs from 'node:fs/promises';
import path from 'node:path';
import { BundleFormatError, fileSha256, openBundle } from './bundle-file.js';
import { BundleManifest, compareVersions } from './manifest.js';
import { FACTORY, freeBytes } from './releases.js';
import { BundleSignature, keyId, loadTrustedKeys, sha256Hex, verifyBundle } from './signing.js';

/** Why a bundle was refused: `details.reason` of the 400 (docs/updates.md lists them). */
export type RefusalReason =
  | 'format'
  | 'untrusted'
  | 'signature'
  | 'digest'
  | 'manifest'
  | 'data_plane'
  | 'version'
  | 'dependencies'
  | 'space';

export class UpdateRefusal extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

/** An unpacked release takes about this many times its compressed payload, plus the snapshot. */
const SPACE_FACTOR = 5;
const SPACE_MARGIN = 64 * 1024 * 1024;

export interface VerifiedBundle {
  manifest: BundleManifest;
  manifestBytes: Buffer;
  payloadFile: string;
}

/**
 * Signature first, then preflight, before anything is applied (§4.3, §9 rule 2): the bundle's
 * shape; an Ed25519 signature by a trusted key over the manifest's and the payload's digests;
 * the payload's digest and size as the manifest states them; a control-plane-only release;
 * a newer version unless `force`; the same third-party modules as installed; room for it.
 */
export async function verifyBundleFile(opts: {
  file: string;
  workDir: string;
  trustedKeysFile: string;
  runningVersion: string;
  force: boolean;
  releasesDir: string;
}): Promise<VerifiedBundle> {
  const opened = await openBundle(opts.file, opts.workDir).catch((err: Error) => {
    if (err instanceof BundleFormatError)
      throw new UpdateRefusal('format', `Not a release bundle: ${err.message}.`);
    throw err;
  });
  const trusted = await loadTrustedKeys(opts.trustedKeysFile);
  if (trusted.length === 0)
    throw new UpdateRefusal(
      'untrusted',
      `No trusted release key: put the release's Ed25519 public key (PEM) in ${opts.trustedKeysFile} (VTL_UPDATE_TRUSTED_KEYS_FILE).`,
    );
  const signature = BundleSignature.safeParse(parseJson(opened.signatureBytes));
  if (!signature.success) throw new UpdateRefusal('signature', "The bundle's signature.json is malformed.");
  const manifestSha = sha256Hex(opened.manifestBytes);
  if (!verifyBundle(trusted, signature.data, manifestSha, opened.payloadSha256))
    throw new UpdateRefusal(
      'signature',
      `The bundle's signature does not verify with any trusted key (it names key ${signature.data.key_id}; trusted: ${trusted.map(keyId).join(', ')}). It was altered or signed with another key.`,
    );
  const parsed = BundleManifest.safeParse(parseJson(opened.manifestBytes));
  if (!parsed.success)
    throw new UpdateRefusal(
      'manifest',
      `The manifest is not valid: ${parsed.error.issues[0]?.message ?? 'unknown'}.`,
    );
  const manifest = parsed.data;
  if (manifest.payload.sha256 !== opened.payloadSha256 || manifest.payload.size !== opened.payloadSize)
    throw new UpdateRefusal('digest', 'The payload does not match the digest and size its manifest states.');
  if (manifest.components.includes('data-plane'))
    throw new UpdateRefusal(
      'data_plane',
      `Release ${manifest.version} also replaces the data plane (tape emulator, kernel modules): it cannot be applied online. Run the installer in a maintenance window; host sessions drop while it runs.`,
    );
  const order = compareVersions(manifest.version, opts.runningVersion);
  if (order <= 0 && !opts.force)
    throw new UpdateRefusal(
      'version',
      `Release ${manifest.version} does not move forward from the running ${opts.runningVersion}; send force=1 to install it anyway.`,
    );
  const lock = path.join(opts.releasesDir, FACTORY, 'package-lock.json');
  const installed = await fileSha256(lock).catch(() => undefined);
  if (installed !== manifest.dependencies_sha256)
    throw new UpdateRefusal(
      'dependencies',
      `Release ${manifest.version} was built against other third-party modules than the installed ones (package-lock.json differs): run the installer to apply it.`,
    );
  const need = manifest.payload.size * SPACE_FACTOR + SPACE_MARGIN;
  const free = await freeBytes(opts.releasesDir);
  if (free < need)
    throw new UpdateRefusal(
      'space',
      `Not enough free space in ${opts.releasesDir}: ${need} bytes needed, ${free} free. Free some space and upload again.`,
    );
  return { manifest, manifestBytes: opened.manifestBytes, payloadFile: opened.payloadFile };
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Removes a refused or finished upload's files. */
export const discard = (...paths: string[]) =>
  Promise.all(paths.map((p) => fs.rm(p, { recursive: true, force: true })));
