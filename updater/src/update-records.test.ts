import { describe, expect, it } from 'vitest';
import { keys, UpdateRecord } from '@vtl/api';
import { useTestStore } from '@vtl/store/testing/use-test-store';
import { lastResult, readUpdateRecords } from './update-records.js';
import { endPending } from './update-writes.js';

/** A rollback record in flight, `id` told apart by its versions. */
const record = (id: string, action: 'update' | 'rollback') =>
  UpdateRecord.parse({
    id,
    action,
    from_version: 'v0.2.0',
    to_version: 'v0.1.0',
    binary: '/releases/a',
    prev_binary: '/releases/b',
    db_path: '/state/etcd',
    db_snapshot: '/state/updates/x/store-snapshot.jsonl',
    attempt_limit: 2,
    staged_at: new Date().toISOString(),
    deadline: new Date(Date.now() + 60_000).toISOString(),
    step: 'restarting the control plane',
    updater: null,
  });

describe('the update records as GET /api/system/update-status reads them', () => {
  const t = useTestStore();

  /**
   * A CI run saw the update's result after a rollback had settled: the status read the pending
   * record after the rollback ended it but the last result before. Each round here ends a
   * rollback while statuses are read; every status must be of one moment.
   */
  it('never shows an ended rollback beside the result it replaced', async () => {
    const seen: string[] = [];
    for (let round = 0; round < 40; round++) {
      const previous = lastResult(true, record(`u${round}`, 'update'), 'v0.2.0', 'Running v0.2.0.');
      const rollback = record(`r${round}`, 'rollback');
      await t.store.put(keys.update.lastResult, previous);
      await t.store.put(keys.update.lastGood, record(`u${round}`, 'update'));
      await t.store.put(keys.update.pending, rollback);
      let ending = true;
      const reads = (async () => {
        while (ending) {
          const s = await readUpdateRecords(t.store);
          if (!s.pending && s.lastResult?.action !== 'rollback')
            seen.push(`round ${round}: no pending record, last result ${s.lastResult?.action}`);
          if (!s.pending && s.lastGood) seen.push(`round ${round}: no pending record, last-good kept`);
        }
      })();
      const ended = await endPending(t.store, (p) => p?.id === rollback.id, {
        lastResult: lastResult(true, rollback, 'v0.1.0', 'rolled back to v0.1.0'),
        lastGood: null,
      });
      await new Promise((resolve) => setTimeout(resolve, 5));
      ending = false;
      await reads;
      expect(ended).toBe('ended');
    }
    expect(seen).toEqual([]);
    const settled = await readUpdateRecords(t.store);
    expect(settled).toMatchObject({ pending: undefined, lastGood: undefined });
    expect(settled.lastResult).toMatchObject({ action: 'rollback', version: 'v0.1.0' });
  }, 60_000);

  it('shows a request no updater has taken over yet as the pending record', async () => {
    await t.store.delete(keys.update.pending);
    const request = record('requested', 'update');
    await t.store.put(keys.updateRequest, request);
    expect((await readUpdateRecords(t.store)).pending).toMatchObject({ id: 'requested' });
    await t.store.delete(keys.updateRequest);
    expect((await readUpdateRecords(t.store)).pending).toBeUndefined();
  });
});
