import { z } from 'zod';

/** The names inside a bundle, in this order; nothing else may be there. */
export const BUNDLE_MEMBERS = ['manifest.json', 'signature.json', 'payload.tar.gz'] as const;

const VERSION = /^v(\d+)\.(\d+)\.(\d+)$/;
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lower-case hex SHA-256');

/**
 * manifest.json of a release bundle (docs/updates.md). `components` says what the release
 * replaces: `control-plane` (apiserver, controller, nodeagent: applied online) and, when present,
 * `data-plane` (tape emulator, kernel modules: only the installer applies it). `dependencies_sha256`
 * is the digest of the package-lock.json the release was built against: a release is laid beside
 * the installed third-party modules, so both must agree.
 */
export const BundleManifest = z.strictObject({
  format: z.literal(1),
  version: z.string().regex(VERSION, 'version must read v<major>.<minor>.<patch>'),
  built: z.iso.datetime({ offset: true }),
  components: z.array(z.enum(['control-plane', 'data-plane'])).min(1),
  payload: z.strictObject({ file: z.literal('payload.tar.gz'), sha256, size: z.number().int().min(1) }),
  dependencies_sha256: sha256,
});
export type BundleManifest = z.infer<typeof BundleManifest>;

/** Negative when a < b, 0 when equal, positive when a > b (both `v<major>.<minor>.<patch>`). */
export function compareVersions(a: string, b: string): number {
  const pa = VERSION.exec(a);
  const pb = VERSION.exec(b);
  if (!pa || !pb) throw new Error(`not a version: ${pa ? b : a}`);
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d;
  }
  return 0;
}
