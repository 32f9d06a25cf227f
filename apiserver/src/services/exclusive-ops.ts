import { Job, conflict, keys } from '@vtl/api';
import type { Store } from '@vtl/store';
import {
  refuseWithActiveJobs,
  type Snapshot,
  ExclusiveOpClaim,
  exclusiveOpBusy,
  loadSnapshot,
  readExclusiveOp,
} from '@vtl/domain';
import { awaitOpResult, newOpRecord, type SubmitOp } from './ops.js';

/** Transaction attempts of one submission; a lost one re-reads and re-checks everything. */
const SUBMIT_ATTEMPTS = 8;

/**
 * Submits an operation that needs every job stopped (apply, data-plane restart, library delete)
 * and waits for it. "No job is active or queued" is checked in the same etcd transaction that
 * records the operation: the jobs are compared as listed (none changed since), and the operation
 * takes the exclusive claim, which job admission and retry compare in theirs (exclusive-op.ts).
 * Of an operation and a job racing, exactly one goes ahead; of two operations, one (the other
 * gets 409 while the first runs). `check` adds the caller's own refusals on the same snapshot.
 */
export async function runExclusiveOp<T>(
  store: Store,
  req: SubmitOp,
  what: string,
  timeoutMs: number,
  check: (s: Snapshot) => void = () => undefined,
): Promise<T> {
  const id = await store.nextId('ops');
  for (let attempt = 1; attempt <= SUBMIT_ATTEMPTS; attempt++) {
    const claim = await readExclusiveOp(store);
    if (claim.busy) throw exclusiveOpBusy(what, claim.busy);
    const jobs = await store.list(keys.jobs.prefix, Job);
    const s = { ...(await loadSnapshot(store)), jobs: jobs.items.map((j) => j.value) };
    refuseWithActiveJobs(s, what);
    check(s);
    const txn = store.transaction().ifUnchangedSince(keys.jobs.prefix, jobs.revision);
    claim.guard(txn);
    txn
      .ifAbsent(keys.ops.one(id))
      .put(keys.ops.one(id), newOpRecord(id, req))
      .put(keys.exclusiveOp, ExclusiveOpClaim.parse({ op: id }));
    if (await txn.commit()) return awaitOpResult<T>(store, id, timeoutMs);
  }
  throw conflict(`Jobs kept changing while ${what.toLowerCase()} was submitted; retry.`);
}
