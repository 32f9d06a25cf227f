import { z } from 'zod';
import type { OpHandler } from '@vtl/reconcile';
import { checkPoolPath } from '../pool/pool-path.js';

/** The node's other pools as the apiserver sends them (`params.pools`). */
const PoolPaths = z.array(z.object({ name: z.string(), path: z.string() })).default([]);

/**
 * POST /api/pools: the pool path checked on this node's own disk (symlinks resolve here, where
 * the pool will live, for the new path and the node's other pools alike), so the apiserver never
 * reads a node's filesystem. Answers the path as it is stored, or the 400 of the rule it breaks.
 */
export function poolPathCheckOp(stateDir: string): OpHandler {
  return async (op) => ({
    path: await checkPoolPath(String(op.params.path), stateDir, PoolPaths.parse(op.params.pools)),
  });
}
