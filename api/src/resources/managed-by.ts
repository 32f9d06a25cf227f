import { z } from 'zod';

/**
 * Which GitOps source owns a record (docs/gitops.md): set by the sync engine on what it creates
 * or adopts. Records made through the REST API have none and are never pruned.
 */
export const ManagedBy = z.object({
  source: z.string(),
  /** The revision (commit, or content hash) that last applied this object. */
  revision: z.string(),
  /** The declared object's name (for initiators, whose record is keyed by WWPN). */
  name: z.string(),
  /** Hash of the declared spec last applied: an unchanged declaration over a changed record is drift. */
  spec_hash: z.string(),
});
export type ManagedBy = z.infer<typeof ManagedBy>;
