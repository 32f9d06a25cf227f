import { describe, expect, it } from 'vitest';
import { EventJournal } from '@vtl/store';
import { Job, JobLedger, keys } from '@vtl/api';
import { submitExclusiveOp } from './exclusive-op.js';
import { admitJob, cancelJob, finishExport, recordExportChunk, updateJob } from './jobs.js';
import { useTestStore } from '@vtl/store/testing/use-test-store';

/** An export of `label` as the I/E watcher detects it, for admitJob. */
const detectedExport = (label: string) => ({
  kind: 'export' as const,
  state: 'detected' as const,
  label,
  library: 1,
  remote_id: 1,
  generation: '',
  node: 'n1',
  detail: '',
  requested_by: 'test',
});

describe('job admission: ids taken in the job transaction', () => {
  const t = useTestStore();

  const admit = (label: string) => admitJob(t.store, new EventJournal(t.store), detectedExport(label));

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

describe("an export's ledger: written and removed with its job's row", () => {
  const t = useTestStore();
  const journal = () => new EventJournal(t.store);

  let n = 0;
  /** An export job in `uploading`, as the nodeagent's upload step sees it. */
  const uploading = async () => {
    const job = await admitJob(t.store, journal(), detectedExport(`LDG${String(++n).padStart(3, '0')}L8`));
    await t.store.put(keys.jobs.one(job.id), { ...job, state: 'uploading' } satisfies Job);
    return job.id;
  };
  const entry = (i: number) => ({
    n: i,
    key: `c${i}`,
    raw_offset: 8 * (i - 1),
    raw_bytes: 8,
    stored_bytes: 8,
    sha256: 'ab',
  });
  const chunk = (id: number, i: number) =>
    recordExportChunk(
      t.store,
      journal(),
      id,
      { chunk_bytes: 8, entries: Array.from({ length: i }, (_, k) => entry(k + 1)) },
      { bytes_done: 8 * i, chunks_done: i },
    );
  const ledger = (id: number) => t.store.get(keys.jobLedgers.one(id), JobLedger);
  const interrupt = (id: number) =>
    updateJob(t.store, journal(), id, 'uploading', () => ({ state: 'interrupted', error: 'test' }));

  it('a chunk verified after the job was cancelled does not bring its ledger back', async () => {
    const id = await uploading();
    expect((await chunk(id, 1))?.chunks_done).toBe(1);
    expect((await ledger(id))?.value.entries).toHaveLength(1);
    // The job is interrupted and cancelled while its upload still runs: the ledger goes...
    await interrupt(id);
    await cancelJob(t.store, journal(), id);
    expect(await ledger(id)).toBeUndefined();
    // ...and the upload's next verified chunk writes neither the ledger nor the row.
    expect(await chunk(id, 2)).toBeUndefined();
    expect(await ledger(id)).toBeUndefined();
    expect((await t.store.get(keys.jobs.one(id), Job))?.value).toMatchObject({
      state: 'cancelled',
      chunks_done: 1,
    });
  });

  it('racing a chunk against an interrupt and cancel never leaves a cancelled job a ledger', async () => {
    for (let round = 0; round < 10; round++) {
      const id = await uploading();
      await chunk(id, 1);
      await Promise.all([
        chunk(id, 2),
        (async () => {
          await interrupt(id);
          await cancelJob(t.store, journal(), id).catch(() => undefined);
        })(),
      ]);
      const job = (await t.store.get(keys.jobs.one(id), Job))!.value;
      expect(job.state).toBe('cancelled');
      expect(await ledger(id)).toBeUndefined();
    }
  });

  it('the export succeeds and its ledger goes in one transaction', async () => {
    const id = await uploading();
    await chunk(id, 3);
    const done = await finishExport(t.store, journal(), id, { detail: 'exported', chunks_done: 3 });
    expect(done?.state).toBe('succeeded');
    expect(await ledger(id)).toBeUndefined();
    // Not twice: a job that moved on is left as it is.
    expect(await finishExport(t.store, journal(), id, { detail: 'again' })).toBeUndefined();
  });
});
