import path from 'node:path';
import { releaseInfo } from '@vtl/updater';

/** The version of a build that is not a release from a bundle (a checkout, the installer's tree). */
const BUILT_IN_VERSION = 'v0.1.0';

/**
 * The release this process runs from: a bundle's release directory carries release.json (its
 * signed manifest), so an update changes the version /healthz reports without a rebuild.
 */
export const RELEASE = releaseInfo(path.resolve(import.meta.dirname, '../..'), BUILT_IN_VERSION);

/** The running version, `v<major>.<minor>.<patch>` (§9). */
export const VERSION = RELEASE.version;
