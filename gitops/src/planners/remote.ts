import { changedFields, remoteDeclared, remoteStored } from '../mapping.js';
import type { KindPlanner } from './planner.js';

export const remotePlanner: KindPlanner<'TapeRemote'> = {
  checkReferences: (ctx, at, o) => ctx.checkSecret(at, 'spec.secretRef', o.spec.secretRef),
  isStored: (ctx, name) => ctx.observed.remotes.some((r) => r.name === name),
  match(ctx, at, o) {
    const name = o.metadata.name;
    const recs = ctx.observed.remotes.filter((r) => r.name === name);
    if (recs.length > 1) {
      ctx.err(
        at,
        'metadata.name',
        `${recs.length} remotes are named "${name}" (ids ${recs.map((r) => r.id).join(', ')}); rename all but one through the API`,
      );
      return undefined;
    }
    const rec = recs[0];
    if (!rec) return { fields: [] };
    return {
      target: { kind: o.kind, id: rec.id, name },
      owner: rec.managed_by,
      fields: changedFields(
        remoteDeclared(o, ctx.secret),
        remoteStored(rec, ctx.observed.remoteSecrets[rec.id]),
      ),
    };
  },
  prunable: (ctx, source, matched) =>
    ctx.observed.remotes
      .filter((r) => r.managed_by?.source === source && !matched.has(r.id))
      .map((r) => ({ kind: 'TapeRemote', id: r.id, name: r.name })),
};
