import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestStore } from './testing/use-test-store.js';

const Named = z.object({ name: z.string() });

const env = useTestStore();
let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-snap-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('store snapshots (the one an update takes and a rollback restores)', () => {
  it('restores records as they were: later ones deleted, changed ones rewritten, excluded and leased ones kept', async () => {
    await env.store.put('/vtl/snap/keep', { name: 'before' });
    await env.store.put('/vtl/snap/changed', { name: 'before' });
    await env.store.put('/vtl/history/1', { name: 'old event' });
    for (let i = 0; i < 250; i++)
      await env.store.put(`/vtl/snap/many/${String(i).padStart(3, '0')}`, { name: `n${i}` });
    const file = path.join(dir, 'snap.jsonl');
    const saved = await env.store.saveSnapshot(file, ['/vtl/history/']);
    expect(saved).toBe(252);

    await env.store.put('/vtl/snap/changed', { name: 'after' });
    await env.store.put('/vtl/snap/created-later', { name: 'after' });
    await env.store.put('/vtl/history/2', { name: 'new event' });
    // More than one transaction's worth of records created since.
    for (let i = 0; i < 250; i++) await env.store.put(`/vtl/snap/later/${i}`, { name: 'x' });
    const lease = await env.store.lease(30);
    await env.store.put('/vtl/snap/leased', { name: 'live' }, { lease });

    const result = await env.store.restoreSnapshot(file, ['/vtl/history/']);
    expect(result).toEqual({ put: 1, deleted: 251 });
    expect((await env.store.get('/vtl/snap/keep', Named))?.value.name).toBe('before');
    expect((await env.store.get('/vtl/snap/changed', Named))?.value.name).toBe('before');
    expect(await env.store.get('/vtl/snap/created-later', Named)).toBeUndefined();
    expect(await env.store.listKeys('/vtl/snap/later/')).toEqual([]);
    expect(await env.store.listKeys('/vtl/snap/many/')).toHaveLength(250);
    expect((await env.store.get('/vtl/history/2', Named))?.value.name).toBe('new event');
    expect((await env.store.get('/vtl/snap/leased', Named))?.value.name).toBe('live');
    await lease.revoke();
  });

  it('refuses a file that is not a snapshot, changing nothing', async () => {
    const file = path.join(dir, 'junk.jsonl');
    await fs.writeFile(file, '{"format":2}\n');
    await expect(env.store.restoreSnapshot(file, [])).rejects.toThrow(/not a store snapshot/);
    expect((await env.store.get('/vtl/snap/keep', Named))?.value.name).toBe('before');
  });
});
