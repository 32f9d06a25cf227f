import { settingField, settingsBody, storedSetting } from '../mapping.js';
import type { KindPlanner } from './planner.js';

/** The appliance's one set of settings: always matched, owned by the source that applied it. */
export const settingsPlanner: KindPlanner<'ApplianceSettings'> = {
  adopts: false,
  ownedElsewhere: (owner) =>
    `ApplianceSettings are managed by source "${owner.source}" (object "${owner.name}"); the appliance has one set of settings, declared by one source: remove them from this one, or from "${owner.source}" first`,
  checkReferences(ctx, at, o) {
    const ref = o.spec.export?.defaultRemoteRef;
    if (ref && !ctx.exists('TapeRemote', ref))
      ctx.err(
        at,
        'spec.export.defaultRemoteRef',
        `spec.export.defaultRemoteRef: no TapeRemote "${ref}" is declared or exists`,
      );
  },
  match(ctx, _at, o) {
    const { observed } = ctx;
    const want = settingsBody(o.spec, (n) => observed.remotes.find((r) => r.name === n)?.id);
    // A default remote declared in this set and not yet created differs until it is.
    const fields = Object.entries(want)
      .filter(
        ([k, v]) =>
          storedSetting(observed.settings, k) !== v ||
          (k === 'export.default_remote' && v === '' && o.spec.export?.defaultRemoteRef),
      )
      .map(([k]) => settingField(k));
    return {
      target: { kind: 'ApplianceSettings', id: 'settings', name: o.metadata.name },
      owner: observed.settingsOwner,
      fields,
    };
  },
};
