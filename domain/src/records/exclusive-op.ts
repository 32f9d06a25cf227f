import { Job, Op, conflict, isOpFinished, keys } from '@vtl/api';
import { z } from 'zod';
import type { Store, Txn } from '@vtl/store';
import { loadSnapshot } from '../load-snapshot.js';
import { refuseWithActiveJobs, type Snapshot } from '../snapshot.js';
import { recordNewOp, type SubmitOp } from './ops.js';

/**
 * The record under keys.exclusiveOp: the last apply, data-plane restart or library delete
 * submitted. Such an operation needs every job stopped; it is admitted in one transaction with
 * "no job changed since the listing that found none active", and a job is admitted (or retried)
 * only while the operation this claim names has finished, compared in the job's transaction.
 * So a job can never start between the operation's check and its work, nor during it.
 */
export const ExclusiveOpClaim = z.object({ op: z.number().int().positive() });

/** The claim as read: the unfinished operation that holds it, or a guard keeping it as read. */
export interface ExclusiveOpRead {
  busy?: Op;
  guard: (txn: Txn) => void;
}

/**
 * Reads the claim. `allowed` names an operation whose own follow-up work may go ahead while it
 * holds the claim (a recovery's imports into the library its apply activates): then the guard
 * keeps the claim naming that operation.
 */
export async function readExclusiveOp(store: Store, allowed?: number): Promise<ExclusiveOpRead> {
  const claim = await store.get(keys.exclusiveOp, ExclusiveOpClaim);
  if (!claim) return { guard: (txn) => txn.ifAbsent(keys.exclusiveOp) };
  const opKey = keys.ops.one(claim.value.op);
  const op = await store.get(opKey, Op);
  if (op && !isOpFinished(op.value)) {
    if (op.value.id !== allowed) return { busy: op.value, guard: () => undefined };
    return { guard: (txn) => void txn.ifModRevision(keys.exclusiveOp, claim.modRevision) };
  }
  return {
    guard: (txn) => {
      txn.ifModRevision(keys.exclusiveOp, claim.modRevision);
      if (op) txn.ifModRevision(opKey, op.modRevision);
      else txn.ifAbsent(opKey);
    },
  };
}

const WHAT: Record<string, string> = {
  apply: 'an apply',
  dataplane_restart: 'a data-plane restart',
  delete_library: 'a library delete',
};

/** The 409 for work refused while an exclusive operation runs. */
export function exclusiveOpBusy(what: string, op: Op) {
  return conflict(
    `${what} is refused while ${WHAT[op.kind] ?? op.kind} (operation ${op.id}, ${op.state}) runs; retry once it finished (GET /api/events shows it).`,
    { op: op.id },
  );
}

/** Transaction attempts of one submission; a lost one re-reads and re-checks everything. */
const SUBMIT_ATTEMPTS = 8;

/**
 * Records an operation that needs every job stopped (apply, data-plane restart, library delete);
 * returns its id. "No job is active or queued" is checked in the same etcd transaction that
 * records the operation: the jobs are compared as listed (none changed since), and the operation
 * takes the exclusive claim, which job admission and retry compare in theirs (records/jobs.ts).
 * Of an operation and a job racing, exactly one goes ahead; of two operations, one (the other
 * gets 409 while the first runs). `check` adds the caller's own refusals on the same snapshot;
 * `also` (given the operation's id) adds the caller's own writes to that transaction, read
 * afresh on every attempt. The op's id is taken in the transaction: a refusal leaves the counter.
 */
export async function submitExclusiveOp(
  store: Store,
  req: SubmitOp,
  what: string,
  check: (s: Snapshot) => void = () => undefined,
  also: (id: number) => Promise<(txn: Txn) => void> = async () => () => undefined,
): Promise<number> {
  const submitted = await store.withNewId('ops', SUBMIT_ATTEMPTS, async (next) => {
    const claim = await readExclusiveOp(store);
    if (claim.busy) throw exclusiveOpBusy(what, claim.busy);
    const jobs = await store.list(keys.jobs.prefix, Job);
    const s = { ...(await loadSnapshot(store)), jobs: jobs.items.map((j) => j.value) };
    refuseWithActiveJobs(s, what);
    check(s);
    const id = next.id;
    const more = await also(id);
    const txn = store.transaction().ifUnchangedSince(keys.jobs.prefix, jobs.revision);
    claim.guard(txn);
    next.take(txn);
    more(txn);
    recordNewOp(txn, id, req).put(keys.exclusiveOp, ExclusiveOpClaim.parse({ op: id }));
    return (await txn.commit()) ? id : undefined;
  });
  if (submitted !== undefined) return submitted;
  throw conflict(`Jobs kept changing while ${what.toLowerCase()} was submitted; retry.`);
}
