import { Op, conflict, isOpFinished, keys } from '@vtl/api';
import { z } from 'zod';
import type { Store, Txn } from '@vtl/store';

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

export async function readExclusiveOp(store: Store): Promise<ExclusiveOpRead> {
  const claim = await store.get(keys.exclusiveOp, ExclusiveOpClaim);
  if (!claim) return { guard: (txn) => txn.ifAbsent(keys.exclusiveOp) };
  const opKey = keys.ops.one(claim.value.op);
  const op = await store.get(opKey, Op);
  if (op && !isOpFinished(op.value)) return { busy: op.value, guard: () => undefined };
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
