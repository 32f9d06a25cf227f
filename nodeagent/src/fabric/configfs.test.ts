import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigFs } from './configfs.js';

describe('ConfigFs group removal on a plain tree', () => {
  let root: string;
  let cfs: ConfigFs;
  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-configfs-'));
    cfs = new ConfigFs(root);
  });
  afterEach(() => fs.rm(root, { recursive: true, force: true }));

  it('removes a group while something is still adding its default attributes', async () => {
    await cfs.ensureGroup('acl');
    // A kernel stand-in adds default groups and attributes one at a time, as fast as removal goes.
    const adding = (async () => {
      for (const group of ['attrib', 'auth', 'param', 'fabric_statistics'])
        await fs.mkdir(cfs.path('acl', group)).catch(() => undefined);
      for (const attribute of ['tag', 'info', 'cmdsn_depth'])
        await fs.writeFile(cfs.path('acl', attribute), '\n', { flag: 'wx' }).catch(() => undefined);
    })();
    await cfs.removeGroup('acl');
    await adding;
    expect(await cfs.exists('acl')).toBe(false);
  });

  it('refuses to remove a group that still holds a link, as the kernel refuses a mapped LUN', async () => {
    await cfs.ensureGroup('lun');
    await cfs.ensureGroup('acl');
    await cfs.ensureLink('lun', 'acl/tpg_lun');
    await expect(cfs.removeGroup('acl')).rejects.toThrow(/ENOTEMPTY/);
    expect(await cfs.exists('acl/tpg_lun')).toBe(true);
  });
});
