import { changedFields, initiatorDeclared, initiatorName, initiatorStored } from '../mapping.js';
import type { Declared, KindPlanner } from './planner.js';

export const initiatorPlanner: KindPlanner<'TapeInitiator'> = {
  checkReferences(ctx, at, o) {
    for (const [i, ref] of (o.spec.libraryRefs ?? []).entries())
      if (!ctx.exists('VirtualTapeLibrary', ref))
        ctx.err(
          at,
          `spec.libraryRefs[${i}]`,
          `spec.libraryRefs[${i}]: no VirtualTapeLibrary "${ref}" is declared or exists`,
        );
    if (o.spec.chap) {
      ctx.checkSecret(at, 'spec.chap.secretRef', o.spec.chap.secretRef);
      if (o.spec.chap.mutualSecretRef)
        ctx.checkSecret(at, 'spec.chap.mutualSecretRef', o.spec.chap.mutualSecretRef);
    }
  },
  match(ctx, at, o) {
    const id = initiatorName(o.spec.wwpn);
    const rec = id && ctx.observed.initiators.find((i) => i.wwpn === id.name);
    const twin = ctx
      .declared('TapeInitiator')
      .find(
        (d) =>
          d !== at && initiatorName((d.object as Declared<'TapeInitiator'>).spec.wwpn)?.name === id?.name,
      );
    if (twin)
      ctx.err(
        at,
        'spec.wwpn',
        `spec.wwpn: ${twin.object.metadata.name} (${twin.file}) declares the same initiator`,
      );
    if (!rec) return { fields: [] };
    const stored = initiatorStored(rec, ctx.libraryName, ctx.observed.chapSecrets[rec.wwpn]);
    const want = initiatorDeclared(o, ctx.secret);
    const fields = changedFields(want, stored);
    for (const f of ['ports', 'libraryRefs'])
      if (fields.includes(f) && want[f] === undefined)
        ctx.err(
          at,
          `spec.${f}`,
          `spec.${f}: the appliance cannot widen a stored scope back to "all"; list the values, or delete the initiator through the API and sync again`,
        );
    return { target: { kind: o.kind, id: rec.wwpn, name: o.metadata.name }, owner: rec.managed_by, fields };
  },
  prunable: (ctx, source, matched) =>
    ctx.observed.initiators
      .filter((i) => i.managed_by?.source === source && !matched.has(i.wwpn))
      .map((i) => ({ kind: 'TapeInitiator', id: i.wwpn, name: i.managed_by?.name ?? i.wwpn })),
};
