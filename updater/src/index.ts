export { BundleManifest, compareVersions } from './manifest.js';
export { buildBundle } from './bundle-build.js';
export { openBundle, writeBundle, fileSha256 } from './bundle-file.js';
export { verifyBundleFile, UpdateRefusal, discard, type RefusalReason } from './preflight.js';
export { loadTrustedKeys, keyId, signBundle } from './signing.js';
export { activeRelease, pointLink, releaseInfo, FACTORY, CURRENT } from './releases.js';
export { launchUpdater, settleAbandonedUpdate } from './launch.js';
export {
  SNAPSHOT_EXCLUDES,
  updateDir,
  readPending,
  readLastGood,
  readUpdateRecords,
} from './update-records.js';
export type { Settled } from './takeover.js';
export { updaterGone } from './updater-identity.js';
export { cartridgesSince, findOrphanImages } from './orphan-images.js';
