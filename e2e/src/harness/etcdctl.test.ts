import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textsInFiles } from './etcdctl.js';

describe('textsInFiles', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'texts-in-files-'));
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it('finds a text across a chunk boundary and at the end of a file, and not one that is absent', async () => {
    const mb = 1024 * 1024;
    const file = path.join(dir, 'wal');
    const bytes = Buffer.alloc(3 * mb);
    bytes.write('straddling-secret', mb - 8);
    bytes.write('at-the-end', bytes.length - 'at-the-end'.length);
    await fs.writeFile(file, bytes);
    const [found] = await textsInFiles([file], ['straddling-secret', 'at-the-end', 'absent-secret']);
    expect(found?.holds('straddling-secret')).toBe(true);
    expect(found?.holds('at-the-end')).toBe(true);
    expect(found?.holds('absent-secret')).toBe(false);
    expect(() => found?.holds('never-searched')).toThrow(/not searched/);
  });
});
