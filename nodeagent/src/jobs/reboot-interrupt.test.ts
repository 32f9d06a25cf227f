import { describe, expect, it } from 'vitest';
import { Job, keys } from '@vtl/api';
import { EventJournal } from '@vtl/store';
import { interruptJobsAfterReboot } from './reboot-interrupt.js';
import { exportJob } from './testing/jobs.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

const job = (id: number, state: Job['state'], node = 'n1') => exportJob(id, { state, node });

describe('jobs after a host reboot', () => {
  const t = useTestStore();
  const run = (bootId: string) =>
    interruptJobsAfterReboot({ store: t.store, journal: new EventJournal(t.store), node: 'n1', bootId });
  const state = async (id: number) => (await t.store.get(keys.jobs.one(id), Job))!.value.state;

  it('resumes under the same boot and interrupts running jobs of this node after a reboot', async () => {
    await t.store.put(keys.jobs.one(1), job(1, 'uploading'));
    await t.store.put(keys.jobs.one(2), job(2, 'queued'));
    await t.store.put(keys.jobs.one(3), job(3, 'downloading', 'n2'));
    expect(await run('boot-a')).toEqual([]);
    expect(await run('boot-a')).toEqual([]);
    expect(await state(1)).toBe('uploading');

    expect(await run('boot-b')).toEqual([1]);
    expect(await state(1)).toBe('interrupted');
    expect((await t.store.get(keys.jobs.one(1), Job))!.value.error).toMatch(/reboot of node n1.*retry/);
    expect(await state(2)).toBe('queued');
    expect(await state(3)).toBe('downloading');
  });
});
