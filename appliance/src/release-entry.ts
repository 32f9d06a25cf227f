import { realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
// The releases module alone: the package's index brings the update engine (zod, tar-stream).
import { CURRENT, FACTORY, pointLink } from '@vtl/updater/releases';

/**
 * The launcher's side of updates (docs/updates.md): `<releases>/factory` names the installed
 * tree, and each control-plane process starts from `<releases>/current` when an update has
 * switched it, so a control-plane restart is what moves it to another release.
 */
export async function prepareReleases(releasesDir: string, installRoot: string): Promise<void> {
  await fs.mkdir(releasesDir, { recursive: true, mode: 0o755 });
  await pointLink(releasesDir, FACTORY, installRoot);
}

/** The entry file of `pkg` in the release the control plane runs now, resolved at each start. */
export function releaseEntry(
  releasesDir: string,
  installRoot: string,
  pkg: string,
  file: string,
): () => string {
  return () => {
    let root = installRoot;
    try {
      root = realpathSync(path.join(releasesDir, CURRENT));
    } catch {
      // no update applied: the installed tree
    }
    return path.join(root, pkg, 'dist', file);
  };
}
