import type { RecoverRequest, RecoverResponse } from '@vtl/api';
import type { Store } from '@vtl/store';
import { checkRecoverPreconditions } from '@vtl/domain';
import type { z } from 'zod';
import { runRemoteOp } from './remote-ops.js';

/**
 * POST /api/libraries/recover (§4.6 rule 5): the preconditions etcd can check answer 400 here
 * with nothing written; the recovery itself (reading the bucket, declaring the library,
 * activating it, queueing the imports) is a `recover` op the controller runs and resumes after
 * a restart. The route waits for it: the activation's own wait (VTL_OP_TIMEOUT_MS) plus the
 * deadline of the two bucket reads (VTL_REMOTE_DEADLINE_MS each).
 */
export async function recoverLibrary(
  store: Store,
  body: z.infer<typeof RecoverRequest>,
  opts: { requestedBy: string; opTimeoutMs: number; remoteDeadlineMs: number },
): Promise<z.infer<typeof RecoverResponse>> {
  await checkRecoverPreconditions(store, body);
  const { result } = await runRemoteOp<z.infer<typeof RecoverResponse>>(store, {
    kind: 'recover',
    params: { request: body, deadline_ms: opts.remoteDeadlineMs, apply_wait_ms: opts.opTimeoutMs },
    requestedBy: opts.requestedBy,
    waitMs: opts.opTimeoutMs + 2 * opts.remoteDeadlineMs,
  });
  return result;
}
