import { changedFields, libraryDeclared, libraryStored } from '../mapping.js';
import type { Located } from '../parse.js';
import type { Declared, KindPlanner } from './planner.js';

export const libraryPlanner: KindPlanner<'VirtualTapeLibrary'> = {
  checkReferences(ctx, at, o) {
    if (!ctx.exists('TapePool', o.spec.poolRef))
      ctx.err(
        at,
        'spec.poolRef',
        `spec.poolRef: no TapePool "${o.spec.poolRef}" is declared or exists; declare it or fix the name`,
      );
  },
  // One library per pool (the REST rule), checked across the set and the appliance.
  checkSet(ctx) {
    const homes = new Map<string, Located>();
    for (const at of ctx.declared('VirtualTapeLibrary')) {
      const o = at.object as Declared<'VirtualTapeLibrary'>;
      const other = homes.get(o.spec.poolRef);
      if (other)
        ctx.err(
          at,
          'spec.poolRef',
          `spec.poolRef: pool "${o.spec.poolRef}" already homes ${other.object.metadata.name} (${other.file}); one library per pool`,
        );
      homes.set(o.spec.poolRef, at);
      const pool = ctx.livePools.find((p) => p.name === o.spec.poolRef);
      const home = pool && ctx.liveLibraries.find((l) => l.home_pool === pool.id);
      if (home && home.name !== o.metadata.name)
        ctx.err(
          at,
          'spec.poolRef',
          `spec.poolRef: pool "${pool.name}" already homes library ${home.id} (${home.name}); use a free pool`,
        );
    }
  },
  isStored: (ctx, name) => ctx.liveLibraries.some((l) => l.name === name),
  match(ctx, at, o) {
    const name = o.metadata.name;
    const recs = ctx.liveLibraries.filter((l) => l.name === name);
    if (recs.length > 1) {
      ctx.err(
        at,
        'metadata.name',
        `${recs.length} libraries are named "${name}" (ids ${recs.map((l) => l.id).join(', ')}); rename all but one through the API`,
      );
      return undefined;
    }
    const rec = recs[0];
    const auto = o.spec.activation === 'auto';
    if (!rec) return { fields: [], activate: auto, pending: !auto };
    return {
      activateOnRecreate: auto,
      target: { kind: o.kind, id: rec.id, name },
      owner: rec.managed_by,
      fields: changedFields(libraryDeclared(o), libraryStored(rec, ctx.poolName)),
      activate: auto && rec.state === 'pending_restart',
      pending: o.spec.activation === 'manual' && rec.state === 'pending_restart',
    };
  },
  prunable: (ctx, source, matched) =>
    ctx.liveLibraries
      .filter((l) => l.managed_by?.source === source && !matched.has(l.id))
      .map((l) => ({ kind: 'VirtualTapeLibrary', id: l.id, name: l.name })),
};
