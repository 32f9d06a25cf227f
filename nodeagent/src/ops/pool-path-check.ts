import type { OpHandler } from '@vtl/reconcile';
import { checkPoolPath } from '../pool/pool-path.js';

/**
 * POST /api/pools: the pool path checked on this node's own disk (symlinks resolve here, where
 * the pool will live), so the apiserver never reads a node's filesystem. Answers the path as it
 * is stored, or the 400 of the rule it breaks.
 */
export function poolPathCheckOp(stateDir: string): OpHandler {
  return async (op) => ({ path: await checkPoolPath(String(op.params.path), stateDir) });
}
