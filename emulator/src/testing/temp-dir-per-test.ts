import { afterEach, beforeEach } from 'vitest';
import { makeTempDir } from '../util/temp-dir.js';

/**
 * Registers hooks that give every test of the file a fresh temporary directory and remove it
 * afterwards; `path` is the current test's.
 */
export function tempDirPerTest(): { readonly path: string } {
  let dir: { path: string; cleanup: () => Promise<void> } | undefined;
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    await dir?.cleanup();
    dir = undefined;
  });
  return {
    get path() {
      if (!dir) throw new Error('the temporary directory exists only while a test runs');
      return dir.path;
    },
  };
}
