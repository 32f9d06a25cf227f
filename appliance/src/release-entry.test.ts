import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pointLink } from '@vtl/updater';
import { prepareReleases, releaseEntry } from './release-entry.js';

describe('the launcher starts each control-plane process from the switched-to release', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-releases-'));
  });
  afterAll(() => fs.rm(tmp, { recursive: true, force: true }));

  it('uses the installed tree until an update switches current, and the new release after', async () => {
    const installed = path.join(tmp, 'installed');
    const releases = path.join(tmp, 'state', 'releases');
    await fs.mkdir(installed);
    await prepareReleases(releases, installed);
    // A later start (another install path) repoints factory atomically.
    await prepareReleases(releases, installed);
    expect(await fs.readlink(path.join(releases, 'factory'))).toBe(installed);
    const entry = releaseEntry(releases, installed, 'apiserver', 'server.js');
    expect(entry()).toBe(path.join(installed, 'apiserver', 'dist', 'server.js'));
    const release = path.join(releases, 'v0.2.0-abcdef12');
    await fs.mkdir(release);
    await pointLink(releases, 'current', release);
    expect(entry()).toBe(path.join(release, 'apiserver', 'dist', 'server.js'));
  });
});
