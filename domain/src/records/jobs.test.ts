import { describe, expect, it } from 'vitest';
import { EventJournal } from '@vtl/store';
import { Job, keys } from '@vtl/api';
import { submitExclusiveOp } from './exclusive-op.js';
import { admitJob } from './jobs.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

describe('job admission: ids taken in the job transaction', () => {
  const t = useTestStore();

  const admit = (label: string) =>
    admitJob(t.store, new EventJournal(t.store), {
      kind: 'export',
      state: 'detected',
      label,
      library: 1,
      remote_id: 1,
      generation: '',
      node: 'n1',
      detail: '',
      requested_by: 'test',
    });

  it('racing admissions of different labels are all admitted, each with its own next id', async () => {
    const labels = Array.from({ length: 20 }, (_, i) => `RAC${String(i).padStart(3, '0')}L8`);
    const jobs = await Promise.all(labels.map(admit));
    expect(jobs.map((j) => j.id).sort((a, b) => a - b)).toEqual(labels.map((_, i) => i + 1));
  });

  it('a refused admission (the label is held) leaves the counter', async () => {
    const held = await admit('HLD001L8');
    for (let i = 0; i < 3; i++) await expect(admit('HLD001L8')).rejects.toMatchObject({ code: 'conflict' });
    expect((await admit('HLD002L8')).id).toBe(held.id + 1);
  });
});

describe('job admission while an exclusive operation runs', () => {
  const t = useTestStore();

  const admit = (label: string, duringOp?: number) =>
    admitJob(
      t.store,
      new EventJournal(t.store),
      {
        kind: 'import',
        state: 'queued',
        label,
        library: 1,
        remote_id: 1,
        generation: 'g1',
        target_library: 1,
        node: 'n1',
        detail: '',
        requested_by: 'test',
      },
      undefined,
      duringOp,
    );

  it('is refused, except for the work of the operation that holds the claim', async () => {
    const apply = await submitExclusiveOp(
      t.store,
      { kind: 'apply', executor: 'controller', params: {} },
      'Apply',
    );
    await expect(admit('EXC001L8')).rejects.toMatchObject({ code: 'conflict', details: { op: apply } });
    await expect(admit('EXC001L8', apply + 1)).rejects.toMatchObject({ code: 'conflict' });
    const job = await admit('EXC001L8', apply);
    expect(job).toMatchObject({ label: 'EXC001L8', state: 'queued' });
    expect((await t.store.get(keys.jobs.one(job.id), Job))?.value.state).toBe('queued');
  });
});
