import { changedFields, poolDeclared, poolStored } from '../mapping.js';
import type { KindPlanner } from './planner.js';

export const poolPlanner: KindPlanner<'TapePool'> = {
  isStored: (ctx, name) => ctx.livePools.some((p) => p.name === name),
  match(ctx, _at, o) {
    const rec = ctx.livePools.find((p) => p.name === o.metadata.name);
    if (!rec) return { fields: [] };
    return {
      target: { kind: o.kind, id: rec.id, name: o.metadata.name },
      owner: rec.managed_by,
      fields: changedFields(poolDeclared(o), poolStored(rec, o)),
    };
  },
  prunable: (ctx, source, matched) =>
    ctx.livePools
      .filter((p) => p.managed_by?.source === source && !matched.has(p.id))
      .map((p) => ({ kind: 'TapePool', id: p.id, name: p.name })),
};
