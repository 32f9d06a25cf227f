export { BundleManifest, compareVersions } from './manifest.js';
export { buildBundle } from './bundle-build.js';
export { openBundle, writeBundle, fileSha256 } from './bundle-file.js';
export { verifyBundleFile, UpdateRefusal, discard, type RefusalReason } from './preflight.js';
export { loadTrustedKeys, keyId, signBundle } from './signing.js';
export { activeRelease, pointLink, releaseInfo, FACTORY, CURRENT } from './releases.js';
export { launchUpdater } from './launch.js';
export { SNAPSHOT_EXCLUDES, updateDir, readPending, readLastGood } from './update-records.js';
